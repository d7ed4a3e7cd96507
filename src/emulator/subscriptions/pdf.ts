/**
 * A minimal one-page PDF of an attachment V2 (seed 000: the generated PDF labels fields in English, Danish
 * and Finnish). Enough for a client to store and show; the emulator's own layout.
 */
function esc(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, "?");
}

export function pdfOf(body: unknown): Buffer {
  const o = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  const d = (
    typeof o.attachment_details === "object" && o.attachment_details !== null ? o.attachment_details : {}
  ) as Record<string, unknown>;
  const lines: string[] = [];
  if (typeof d.document_title === "string") lines.push(d.document_title);
  if (typeof d.invoice_number === "string")
    lines.push(`Invoice number / Fakturanummer / Laskun numero: ${d.invoice_number}`);
  const articles = Array.isArray(d.articles) ? d.articles : [];
  for (const a of articles) {
    const art = (typeof a === "object" && a !== null ? a : {}) as Record<string, unknown>;
    lines.push(`${String(art.article_description ?? "")}  ${String(art.total_price_including_vat ?? "")}`);
  }
  lines.push(`Total / I alt / Yhteensa: ${String(d.total_amount ?? "")}`);
  if (d.total_vat_amount !== undefined) lines.push(`VAT / Moms / ALV: ${String(d.total_vat_amount)}`);
  if (typeof d.comment === "string") lines.push(...d.comment.split("\\n"));
  const content = ["BT /F1 11 Tf 50 780 Td 14 TL", ...lines.map((l) => `(${esc(l)}) Tj T*`), "ET"].join("\n");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((obj, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${obj}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
