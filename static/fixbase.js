// Move focus to a triage answer when it arrives, so keyboard and screen-reader users land on it
// (the results region is also aria-live). No inline script: the CSP allows only files from here.
document.addEventListener("htmx:afterSwap", function (event) {
  if (event.detail.target && event.detail.target.id === "results") {
    var verdict = document.getElementById("verdict") || document.querySelector("#results [role=alert]");
    if (verdict) { verdict.setAttribute("tabindex", "-1"); verdict.focus(); }
  }
});
