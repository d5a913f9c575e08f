// How a trace location appears in errors and logs. Signed URLs carry credentials in the query string, and any
// URL may in its user info: both are left out, also when the text does not parse as a URL.

export function describeLocation(location: string): string {
  try {
    const url = new URL(location);
    if (url.protocol === "file:" || !/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) return location;
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return location.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1").replace(/[?#].*$/, "");
  }
}
