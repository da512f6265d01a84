/* Search results quote the page's title and text, and a formula there is still its TeX source
   ("\(\sqrt{d_k}\)"): MathJax only renders the page itself. Before Sphinx shows a title or cuts
   a result's summary out of the text, turn the TeX into plain symbols ("√d_k"). */
const TEX_SYMBOLS = {
  alpha: "α", beta: "β", gamma: "γ", delta: "δ", varepsilon: "ε", epsilon: "ε", theta: "θ",
  lambda: "λ", mu: "μ", pi: "π", sigma: "σ", tau: "τ", phi: "φ", Sigma: "Σ", Delta: "Δ",
  partial: "∂", nabla: "∇", cdot: "·", cdots: "⋯", ldots: "…", dots: "…", times: "×", odot: "⊙",
  sum: " Σ", prod: " Π", top: "ᵀ", intercal: "ᵀ", approx: "≈", neq: "≠", ne: "≠", le: "≤", leq: "≤",
  ge: "≥", geq: "≥", infty: "∞", in: "∈", to: "→", rightarrow: "→", mapsto: "↦", pm: "±",
  lVert: "‖", rVert: "‖", Vert: "‖", quad: " ", qquad: " ", log: "log", exp: "exp", max: "max",
  min: "min", left: "", right: "", big: "", Big: "", bigg: "", Bigg: "", mathrel: "", displaystyle: "",
};

function plainMath(text) {
  let out = text.replace(/\\\(|\\\)|\\\[|\\\]|\$\$/g, "");
  for (let i = 0; i < 3; i++) {  // nested \frac{\sqrt{..}}{..}: innermost first
    out = out
      .replace(/\\sqrt\{([^{}]*)\}/g, (_, x) => (x.length > 1 && /[^\w]/.test(x) ? `√(${x})` : `√${x}`))
      .replace(/\\frac\{([^{}]*)\}\{([^{}]*)\}/g, "$1/$2")
      .replace(/\\(?:text|mathrm|operatorname|mathbf|boldsymbol|mathcal|mathbb|textbf|mathit)\{([^{}]*)\}/g, "$1");
  }
  return out
    .replace(/\\([A-Za-z]+)/g, (_, name) => (name in TEX_SYMBOLS ? TEX_SYMBOLS[name] : name))
    .replace(/\^ᵀ/g, "ᵀ")
    .replace(/\\[,;:! ]/g, " ")
    .replace(/\\([{}_%&$#])/g, "$1")
    .replace(/[{}]/g, "")
    .replace(/[ \t]+/g, " ");
}

if (typeof module !== "undefined") {
  module.exports = { plainMath };  // for the test suite (node)
} else {
  // Registered before searchtools.js registers Search.init, so this runs first; by then
  // searchindex.js has handed Search its index (page and section titles hold TeX too).
  document.addEventListener("DOMContentLoaded", () => {
    if (typeof Search === "undefined" || !Search.htmlToText) return;  // not the search page
    const htmlToText = Search.htmlToText;
    Search.htmlToText = (html, anchor) => plainMath(htmlToText(html, anchor));
    const index = Search._index;
    if (index && index.titles) index.titles = index.titles.map(plainMath);
    if (index && index.alltitles) {
      index.alltitles = Object.fromEntries(Object.entries(index.alltitles).map(([t, v]) => [plainMath(t), v]));
    }
  });
}
