// The interai console's only script: shows each <time> in the reader's time zone (the page says UTC, and the UTC
// value stays in the title, shown on hover). Every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  for (const element of document.querySelectorAll("time[datetime]")) {
    const moment = new Date(element.getAttribute("datetime"));
    if (!Number.isNaN(moment.getTime())) {
      element.textContent = format.format(moment);
    }
  }
});
