/**
 * A group's name: 1-63 characters, lower-case letters, digits and `.` `_` `-`, starting with a letter or a
 * digit (printable, safe in a URL path, a shell word and a log line as it is). Names are case-sensitive as
 * written; upper case is refused rather than folded, so `Lobby` and `lobby` never both exist.
 */
export const GROUP_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export const GROUP_NAME_RULE =
  "1-63 characters: lower-case letters, digits and . _ -, starting with a letter or a digit";

/** Null when `name` is a valid group name, else why not (naming it, printably). */
export function groupNameProblem(name: string): string | null {
  if (GROUP_NAME.test(name)) return null;
  const shown = JSON.stringify(name.slice(0, 70));
  return `group name ${shown} is not valid: ${GROUP_NAME_RULE}`;
}
