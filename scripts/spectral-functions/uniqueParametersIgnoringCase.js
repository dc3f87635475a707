// Spectral function for .spectral.yaml: parameters of one operation (path-level ones included)
// must differ in `in` + name, header names compared ignoring case (RFC 9110 5.1). spectral:oas
// compares case-sensitively, which let `if-match` and `If-Match` through together.
module.exports = (operation, _options, context) => {
  if (!operation || typeof operation !== 'object') return [];
  const pathItem = context.document.data.paths?.[context.path[1]] ?? {};
  const deref = (p) =>
    p && p.$ref ? p.$ref.slice(2).split('/').reduce((n, k) => n?.[k], context.document.data) : p;
  const seen = new Map();
  const results = [];
  [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])].map(deref).forEach((p, i) => {
    if (!p || !p.name) return;
    const key = `${p.in}:${String(p.name).toLowerCase()}`;
    if (seen.has(key))
      results.push({ message: `${p.in} parameter "${p.name}" repeats "${seen.get(key)}" (names compared ignoring case)` });
    else seen.set(key, p.name);
  });
  return results;
};
