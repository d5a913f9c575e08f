// Stands in for msgpackr-extract, msgpackr's optional native addon, in the bundle (scripts/bundle.mjs). The
// bundle carries no .node files, so the real package could only search the disk for one and fail (msgpackr then
// decodes in JavaScript); exporting nothing gives msgpackr the same answer without the search.
module.exports = undefined;
