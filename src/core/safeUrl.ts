/**
 * A URL as it may be printed: in a message, a log line or a console. The user info (`user:password@`) is
 * dropped everywhere, so a credential pasted into a URL never reaches an output.
 */

/** `url` without its user info (as given when it has none); text that is not a URL is not echoed at all. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === "" && u.password === "") return url;
    u.username = "";
    u.password = "";
    return u.toString();
  } catch {
    return "(a text that is not a URL)";
  }
}
