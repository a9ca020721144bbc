// The console works without this script; it only asks before a form that changes the
// ledger is sent (forms marked data-confirm), and keeps a double click from sending a form
// twice (the server would not act twice either — an upload replays its run, a decision is
// already resolved, a reversal or a correction sent again is refused — this spares the wait).
"use strict";
document.addEventListener("submit", (e) => {
  const form = e.target;
  const ask = form.getAttribute("data-confirm");
  if (ask && !window.confirm(ask)) {
    e.preventDefault();
    return;
  }
  if (form.dataset.sent === "1") {
    e.preventDefault();
    return;
  }
  form.dataset.sent = "1";
  for (const b of form.querySelectorAll("button[type=submit]")) {
    b.setAttribute("aria-busy", "true");
  }
});
