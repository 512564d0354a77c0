// Move focus to a triage answer when it arrives, so keyboard and screen-reader users land on it
// (the results region is also aria-live). No inline script: the CSP allows only files from here.
document.addEventListener("htmx:afterSwap", function (event) {
  if (event.detail.target && event.detail.target.id === "results") {
    var verdict = document.getElementById("verdict") || document.querySelector("#results [role=alert]");
    if (verdict) { verdict.setAttribute("tabindex", "-1"); verdict.focus(); }
  }
});

// An upload can take minutes to send: say so, and do not let a second click send it twice.
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (form.id !== "upload-form") return;
  var button = document.getElementById("upload-button");
  var note = document.getElementById("upload-note");
  if (button) button.disabled = true;
  if (note) note.textContent = "Uploading… the page moves on when the file has arrived.";
});
