// tollgate console: copy buttons and live figures. No inline script: the
// page's Content-Security-Policy allows this file only.
"use strict";
document.addEventListener("click", function (e) {
  var b = e.target.closest("[data-copy]");
  if (!b) return;
  var el = document.getElementById(b.getAttribute("data-copy"));
  if (!el || !navigator.clipboard) return;
  navigator.clipboard.writeText(el.textContent.trim()).then(function () { b.textContent = "Copied"; });
});
// A page whose content carries data-refresh re-reads it every that many
// seconds, without a reload (the server answers with the content alone).
(function () {
  var main = document.querySelector("main[data-refresh]");
  if (!main) return;
  var secs = parseInt(main.getAttribute("data-refresh"), 10);
  if (!(secs > 0)) return;
  setInterval(function () {
    if (document.hidden || document.activeElement && document.activeElement.closest("form")) return;
    fetch(location.href, { headers: { "X-Console-Fragment": "1" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html !== null) main.innerHTML = html; });
  }, secs * 1000);
})();
