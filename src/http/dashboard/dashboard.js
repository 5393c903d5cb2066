// The dashboard's only script (served from its own origin; the pages work without it): a Copy
// button beside a key shown once, and a focus moved to that key when the page opens.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      field.select();
      let copied = false;
      try {
        await navigator.clipboard.writeText(field.value);
        copied = true;
      } catch {
        copied = document.execCommand && document.execCommand("copy");
      }
      button.textContent = copied ? "Copied" : "Press Ctrl+C to copy";
      button.setAttribute("aria-live", "polite");
      setTimeout(() => {
        button.textContent = "Copy";
      }, 2500);
    });
  }
  const created = document.getElementById("created");
  if (created) {
    created.focus();
    document.getElementById("new-key")?.select();
  }
});
