/**
 * The bundles page and its JSON (`/api/v1/bundles`), every dashboard's; and the bundle upload form of the
 * composed fleet server (managers only).
 */
import fastifyMultipart from "@fastify/multipart";
import type { FastifyInstance } from "fastify";
import type { FleetContext } from "../context.js";
import { sessionOf } from "../web/accounts.js";
import { type Html, html } from "../web/html.js";
import { type DashboardTools, SESSION_COOKIE, sameOrigin } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import type { PageTools } from "../web/pageTools.js";
import { listBundles } from "./listStore.js";
import { BundleUploadError, storeBundle } from "./store.js";
import { bundlesPage } from "./views.js";

/** The largest bundle the upload form takes (the form's multipart body). */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

/** The bundles page (`/bundles`) and `/api/v1/bundles`. */
export function mountBundlePages(web: FastifyInstance, ctx: FleetContext, t: DashboardTools): void {
  const { sendHtml, pageContext: pc } = t;
  web.get("/bundles", async (req, reply) => sendHtml(reply, bundlesPage(pc(req), await listBundles(ctx))));
  web.get("/api/v1/bundles", async () => ({ bundles: await listBundles(ctx) }));
}

function bundleForm(csrf: string, message: Html | string = ""): Html {
  return html`<section class="upload"><h2>Upload a bundle</h2>${message}
<form method="post" action="/bundles/upload" enctype="multipart/form-data">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Signed bundle <input type="file" name="bundle" required></label>
<button type="submit">Upload</button></form></section>`;
}

export async function mountBundleUpload(
  web: FastifyInstance,
  ctx: FleetContext,
  t: DashboardTools,
  p: PageTools,
): Promise<void> {
  const { page } = p;
  // Bundle upload for managers (the page itself is the dashboard's /bundles; the form is at /bundles/upload).
  // In a scope of its own: only this route parses multipart bodies, and a request that is not a manager's
  // session from this site is refused before its (up to 64 MiB) body is read.
  await web.register(async (up) => {
    up.addHook("onRequest", async (req, reply) => {
      if (req.method !== "POST") return undefined;
      const token = req.cookies[SESSION_COOKIE];
      const who = token === undefined ? null : await sessionOf(ctx, token);
      if (!sameOrigin(req) || who === null || who.role !== "manager")
        return t.sendHtml(reply, messagePage("Refused", "Only a manager may upload bundles."), 403);
      return undefined;
    });
    // @fastify/multipart (busboy): one file part of at most MAX_UPLOAD_BYTES and a few small fields; with
    // `keyValues` the fields arrive as strings and the file as a Buffer, so the CSRF check reads `_csrf`
    // from the body as it does for every other form.
    await up.register(fastifyMultipart, {
      attachFieldsToBody: "keyValues",
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 8, fieldSize: 4096, parts: 10 },
      throwFileSizeLimit: true,
    });
    web.get("/bundles/upload", async (req, reply) =>
      page(
        req,
        reply,
        "/bundles",
        "Upload a bundle",
        html`<h1>Upload a bundle</h1>${bundleForm(t.session(req).csrf)}`,
      ),
    );
    up.post(
      "/bundles/upload",
      { preHandler: t.managerOnly, bodyLimit: MAX_UPLOAD_BYTES },
      async (req, reply) => {
        const body = req.body as Record<string, unknown> | undefined;
        const bytes = Buffer.isBuffer(body?.bundle) ? body.bundle : undefined;
        const sess = t.session(req);
        const again = (status: number, msg: string) =>
          page(
            req,
            reply,
            "/bundles",
            "Upload a bundle",
            html`<h1>Upload a bundle</h1>${bundleForm(sess.csrf, html`<p class="error" role="alert">${msg}</p>`)}`,
            status,
          );
        if (bytes === undefined || bytes.length === 0) return again(400, "Choose a bundle file.");
        try {
          const stored = await storeBundle(ctx, bytes, sess.username);
          ctx.logger.info(
            { bundle: stored.id, by: sess.username, created: stored.created },
            "bundle uploaded from the dashboard",
          );
          return reply.redirect("/bundles", 303);
        } catch (e) {
          if (e instanceof BundleUploadError) return again(422, `Refused (${e.code}): ${e.message}`);
          throw e;
        }
      },
    );
  });
}
