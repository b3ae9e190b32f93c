// Typeset the math that pymdownx.arithmatex marked (generic mode) with the vendored KaTeX.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".arithmatex").forEach(function (el) {
    var tex = el.textContent.trim();
    var display = tex.startsWith("\\[");
    if (tex.startsWith("\\(") || display) {
      tex = tex.slice(2, -2);
    }
    katex.render(tex, el, { displayMode: display, throwOnError: false, strict: false });
  });
});
