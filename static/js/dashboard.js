// Memory Lane dashboard: the little behaviour htmx does not cover. Loaded as a file (the CSP
// allows no inline script); htmx itself comes from django-htmx's {% htmx_script %}.
(function () {
  "use strict";

  const toast = () => document.getElementById("toast");
  let toastTimer = null;

  function showToast(text) {
    const box = toast();
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { box.hidden = true; }, 6000);
  }

  const MESSAGES = {
    400: "The server could not use that input.",
    403: "Your role in this team does not allow that, or your session expired — reload the page.",
    404: "That no longer exists — it may have been deleted or merged. Reload the page.",
    405: "That action is not available here.",
    413: "That is too large to send.",
    429: "Too many requests; wait a moment and try again.",
    503: "The database is unavailable for a moment; nothing was changed. Try again in a few seconds.",
  };

  document.addEventListener("htmx:responseError", (event) => {
    const status = event.detail.xhr.status;
    showToast(MESSAGES[status] || `Something went wrong on the server (${status}). Try again, or reload the page.`);
  });
  document.addEventListener("htmx:sendError", () => {
    showToast("Could not reach the server. Check your connection and try again.");
  });

  // Copy buttons: <button data-copy="#selector"> copies that field; a bare <button data-copy> the
  // code block beside it.
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const field = button.dataset.copy
      ? document.querySelector(button.dataset.copy)
      : button.parentElement.querySelector("code");
    if (!field) return;
    const isField = "value" in field;
    if (isField) field.select(); else window.getSelection().selectAllChildren(field);
    const done = () => { button.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      const text = isField ? field.value : field.textContent;
      navigator.clipboard.writeText(text).then(done, () => document.execCommand("copy") && done());
    } else if (document.execCommand("copy")) {
      done();
    }
  });

  // Keep the "busy" state of live regions honest for screen readers.
  document.addEventListener("htmx:beforeRequest", (event) => {
    const target = event.detail.target;
    if (target && target.hasAttribute("aria-live")) target.setAttribute("aria-busy", "true");
  });
  document.addEventListener("htmx:afterSettle", (event) => {
    const target = event.detail.target;
    if (target && target.hasAttribute("aria-busy")) target.setAttribute("aria-busy", "false");
  });
})();
