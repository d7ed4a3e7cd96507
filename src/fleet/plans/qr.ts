/**
 * QR codes as inline SVG, rendered on the server: the matrix comes from the QR encoder vendored in
 * qrcode-terminal (Kazuhiko Arase's, MIT), the SVG is one path of unit squares with a 4-module quiet zone.
 */
import { createRequire } from "node:module";

interface QrModel {
  addData(data: string): void;
  make(): void;
  getModuleCount(): number;
  isDark(row: number, col: number): boolean;
}
type QrConstructor = new (typeNumber: number, level: number) => QrModel;

const require = createRequire(import.meta.url);
const QRCode = require("qrcode-terminal/vendor/QRCode/index.js") as QrConstructor;
const LEVEL = require("qrcode-terminal/vendor/QRCode/QRErrorCorrectLevel.js") as Record<
  "L" | "M" | "Q" | "H",
  number
>;

/** The module matrix (true = dark) of `text`, error correction M, smallest version that fits. */
export function qrMatrix(text: string): boolean[][] {
  const qr = new QRCode(-1, LEVEL.M);
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  const rows: boolean[][] = [];
  for (let r = 0; r < n; r++) {
    const row: boolean[] = [];
    for (let c = 0; c < n; c++) row.push(qr.isDark(r, c));
    rows.push(row);
  }
  return rows;
}

/** An SVG document fragment of the matrix: `px` pixels per module. Only digits and fixed markup: safe inline. */
export function qrSvg(text: string, px = 4): string {
  const m = qrMatrix(text);
  const quiet = 4;
  const size = m.length + 2 * quiet;
  let d = "";
  m.forEach((row, r) => {
    row.forEach((dark, c) => {
      if (dark) d += `M${c + quiet} ${r + quiet}h1v1h-1z`;
    });
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="QR code" width="${size * px}" height="${size * px}" ` +
    `viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/>` +
    `<path fill="#000" d="${d}"/></svg>`
  );
}
