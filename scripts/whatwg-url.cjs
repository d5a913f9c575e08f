// Stands in for the whatwg-url package in the bundle (scripts/bundle.mjs). Its only user there is node-fetch
// (through @kubernetes/client-node), which takes `require("url").URL || whatwgUrl.URL`: on Node 20 the first
// always exists, so the package is never used, yet loading it builds tr46's Unicode table on every cold start.
module.exports = { URL: globalThis.URL, URLSearchParams: globalThis.URLSearchParams };
