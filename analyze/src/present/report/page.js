"use strict";
// The report's script: tables sort by any column when its heading is
// clicked (numbers worst first, text A to Z, a second click reverses);
// ?sort=TABLE.COLUMN (and .asc or .desc) clicks a heading once the page
// has loaded; the flame graph's frame says how many frames it drew.
(function () {
  function value(td, numeric) {
    if (numeric) {
      var v = td.getAttribute("data-v");
      return v === null ? -Infinity : parseFloat(v);
    }
    return td.textContent.toLowerCase();
  }

  function sortBy(th) {
    var table = th.closest("table");
    var body = table.tBodies[0];
    var heads = th.parentNode.children;
    var col = Array.prototype.indexOf.call(heads, th);
    var numeric = th.getAttribute("data-type") === "num";
    var now = th.getAttribute("aria-sort");
    var descending = now ? now === "ascending" : numeric;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a.cells[col], numeric), y = value(b.cells[col], numeric);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    });
    for (var i = 0; i < heads.length; i++) heads[i].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    rows.forEach(function (r) { body.appendChild(r); });
  }

  document.querySelectorAll("table.sortable th").forEach(function (th) {
    th.addEventListener("click", function () { sortBy(th); });
  });

  var wanted = new URLSearchParams(window.location.search).get("sort");
  if (wanted) {
    var parts = wanted.split(".");
    var th = document.querySelector(
      'table.sortable[data-key="' + CSS.escape(parts[0]) + '"] th[data-key="' +
        CSS.escape(parts[1] || "") + '"]');
    if (th) {
      th.click();
      var got = th.getAttribute("aria-sort");
      if ((parts[2] === "asc" && got !== "ascending") ||
          (parts[2] === "desc" && got !== "descending")) th.click();
    }
  }

  document.querySelectorAll("iframe.flame").forEach(function (frame) {
    function drawn() {
      var doc = frame.contentDocument;
      if (!doc || !doc.getElementById("frames")) return false;
      frame.setAttribute("data-frames", doc.querySelectorAll("#frames > g").length);
      return true;
    }
    if (!drawn()) frame.addEventListener("load", drawn);
  });
})();
