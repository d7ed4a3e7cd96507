/** Login and logout: a new session token at every login (the old session ends), throttled failures. */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { login, logout, sessionOf } from "./accounts.js";
import type { DashboardScope } from "./options.js";
import { loginPage } from "./pages.js";
import { SESSION_COOKIE } from "./security.js";

const LoginBody = z.object({
  username: z.string().max(200),
  password: z.string().max(4096),
});

export function registerAuthRoutes(web: FastifyInstance, scope: DashboardScope): void {
  const { ctx, secure, sendHtml, session } = scope;

  web.get("/login", async (req, reply) => {
    const token = req.cookies[SESSION_COOKIE];
    if (token !== undefined && (await sessionOf(ctx, token)) !== null) return reply.redirect("/", 303);
    return sendHtml(reply, loginPage(null));
  });

  web.post("/login", async (req, reply) => {
    const parsed = LoginBody.safeParse(req.body);
    if (!parsed.success) return sendHtml(reply, loginPage("Enter a user name and a password."), 400);
    const { username, password } = parsed.data;
    const result = await login(ctx, username, password, req.ip);
    if (result.kind === "throttled") {
      reply.header("retry-after", String(result.retryAfterSeconds));
      return sendHtml(
        reply,
        loginPage(
          `Too many failed logins: try again in ${Math.ceil(result.retryAfterSeconds / 60)} min.`,
          username,
        ),
        429,
      );
    }
    if (result.kind === "refused")
      return sendHtml(reply, loginPage("Wrong user name or password.", username), 401);
    // A new token at every login; the old session (if any) ends.
    const old = req.cookies[SESSION_COOKIE];
    if (old !== undefined) {
      const s = await sessionOf(ctx, old);
      if (s !== null) await logout(ctx, s.id);
    }
    reply.setCookie(SESSION_COOKIE, result.token, {
      httpOnly: true,
      sameSite: "strict",
      secure: secure(req),
      path: "/",
      // No Max-Age: a browser-session cookie; the server ends it after SESSION_IDLE_MS unused.
    });
    return reply.redirect("/", 303);
  });

  web.post("/logout", async (req, reply) => {
    await logout(ctx, session(req).id);
    reply.clearCookie(SESSION_COOKIE, {
      path: "/",
      httpOnly: true,
      sameSite: "strict",
      secure: secure(req),
    });
    return reply.redirect("/login", 303);
  });
}
