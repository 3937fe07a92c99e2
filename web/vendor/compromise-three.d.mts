// The tagger scripts/build/vendor.js copies here (compromise's "three" build): the part of it the
// page calls (web/sources/tokens.js, tagText). Written by hand; tsc does not read the vendored
// module.
declare function nlp(text: string): {
  json(options?: object): { terms: { text: string; pre: string; post: string; tags: string[] }[] }[];
};
export default nlp;
