// benchtape view: the little script the pages need, and nothing else. Written for this viewer
// (no library, no network but this server). Three jobs:
//  1. live regions: a page with data-live opens that event stream; each `region` event carries
//     a region's id and its server-rendered HTML, swapped in with the open/closed state of its
//     <details> kept; `done` ends the stream.
//  2. keyboard: j/k move between calls (rows marked data-call) or list rows (data-nav), opening
//     the subagents a call sits in; o opens/closes the current call's folds; Enter follows the
//     current row's first link; / focuses the search box.
//  3. nothing else: every page works without it.
"use strict";
(function () {
  var status = document.getElementById("live");

  function say(text, cls) {
    if (status) { status.textContent = text; status.className = "live " + (cls || ""); }
  }

  function swap(el, html) {
    var before = Array.prototype.map.call(el.querySelectorAll("details"), function (d) { return d.open; });
    el.innerHTML = html;
    Array.prototype.forEach.call(el.querySelectorAll("details"), function (d, i) {
      if (i < before.length) d.open = before[i];
    });
  }

  var live = document.body.getAttribute("data-live");
  if (live && window.EventSource) {
    var source = new EventSource(live);
    say("connecting…", "");
    source.onopen = function () { say("live", "on"); };
    source.onerror = function () { if (source.readyState !== 2) say("reconnecting…", "off"); };
    source.addEventListener("region", function (e) {
      var m = JSON.parse(e.data);
      var el = document.getElementById(m.id);
      if (el) { swap(el, m.html); marks(); }
    });
    source.addEventListener("done", function () { source.close(); say("finished", ""); });
    source.addEventListener("problem", function (e) { source.close(); say(JSON.parse(e.data).what, "off"); });
  }

  var current = -1;
  function targets() {
    var calls = document.querySelectorAll("[data-call]");
    return calls.length ? calls : document.querySelectorAll("[data-nav]");
  }
  function marks() {
    var all = targets();
    if (current >= all.length) current = all.length - 1;
  }
  function openAround(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
    }
  }
  function go(step) {
    var all = targets();
    if (!all.length) return;
    var old = document.querySelector(".current");
    if (old) old.classList.remove("current");
    current = Math.max(0, Math.min(all.length - 1, current + step));
    var el = all[current];
    openAround(el);
    el.classList.add("current");
    el.scrollIntoView({ block: "center" });
  }
  document.addEventListener("keydown", function (e) {
    var tag = (e.target && e.target.tagName) || "";
    if (e.ctrlKey || e.metaKey || e.altKey || tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    if (e.key === "j") { go(1); e.preventDefault(); }
    else if (e.key === "k") { go(current < 0 ? 1 : -1); e.preventDefault(); }
    else if (e.key === "o") {
      var el = document.querySelector(".current");
      if (!el) return;
      var folds = el.querySelectorAll("details");
      var anyClosed = Array.prototype.some.call(folds, function (d) { return !d.open; });
      Array.prototype.forEach.call(folds, function (d) { d.open = anyClosed; });
      e.preventDefault();
    } else if (e.key === "Enter") {
      var row = document.querySelector(".current");
      var link = row && row.querySelector("a[href]");
      if (link) { window.location.href = link.getAttribute("href"); e.preventDefault(); }
    } else if (e.key === "/") {
      var box = document.querySelector("form.search input");
      if (box) { box.focus(); e.preventDefault(); }
    }
  });
})();
