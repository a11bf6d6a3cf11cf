// Draws the page's Mermaid diagrams with the copy of Mermaid the site carries
// (js/mermaid.min.js, put there at build time by scripts/docs_hooks.py).
// window.kcacheDiagrams settles once every diagram is drawn (the browser test waits on it).
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
window.kcacheDiagrams = new Promise(function (resolve) {
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", resolve);
  } else {
    resolve();
  }
}).then(function () {
  return mermaid.run({ querySelector: "pre.mermaid" });
});
