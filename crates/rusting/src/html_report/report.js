// Zoom (wheel), pan (drag), a tick readout and a cursor for every timeline; the page is complete
// without this script.
(function () {
  "use strict";
  var first = Number(document.body.dataset.first), last = Number(document.body.dataset.last);
  var full = [first - 1, last];
  var view = full.slice();
  var timelines = Array.prototype.slice.call(document.querySelectorAll(".timeline"));
  function step(span) {
    var raw = span / 6, magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 5, 10];
    for (var k = 0; k < steps.length; k++) { if (steps[k] * magnitude >= raw) { return Math.max(1, steps[k] * magnitude); } }
    return Math.max(1, magnitude * 10);
  }
  function apply() {
    var span = view[1] - view[0];
    timelines.forEach(function (timeline) {
      timeline.querySelectorAll("svg.ticks").forEach(function (svg) {
        svg.setAttribute("viewBox", view[0] + " 0 " + span + " " + svg.dataset.height);
      });
      var scale = timeline.querySelector(".scale");
      if (!scale) { return; }
      var s = step(span), html = "";
      for (var label = Math.ceil((view[0] + 1) / s) * s; label <= view[1]; label += s) {
        html += "<span style=\"left:" + ((label - view[0]) / span * 100).toFixed(3) + "%\">" + label + "</span>";
      }
      scale.innerHTML = html;
    });
  }
  function tickAt(svg, clientX) {
    var box = svg.getBoundingClientRect();
    return view[0] + (clientX - box.left) / box.width * (view[1] - view[0]);
  }
  timelines.forEach(function (timeline) {
    var readout = document.createElement("div");
    readout.className = "readout";
    timeline.appendChild(readout);
    var tools = document.createElement("div");
    tools.className = "tools";
    tools.innerHTML = "<button type=\"button\" data-zoom=\"all\">all ticks</button>" +
      (document.getElementById("divergent-tick") ? "<button type=\"button\" data-zoom=\"divergence\">around the divergence</button>" : "") +
      "wheel to zoom, drag to pan";
    timeline.appendChild(tools);
    tools.addEventListener("click", function (event) {
      var which = event.target.dataset && event.target.dataset.zoom;
      if (which === "all") { view = full.slice(); }
      if (which === "divergence") {
        var t = Number(document.getElementById("divergent-tick").textContent);
        view = [Math.max(full[0], t - 60), Math.min(full[1], t + 40)];
      }
      apply();
    });
    var dragging = null;
    timeline.querySelectorAll("svg.ticks").forEach(function (svg) {
      svg.addEventListener("wheel", function (event) {
        event.preventDefault();
        var at = tickAt(svg, event.clientX), factor = event.deltaY > 0 ? 1.25 : 0.8;
        var lo = at - (at - view[0]) * factor, hi = at + (view[1] - at) * factor;
        if (hi - lo < 10) { return; }
        view = [Math.max(full[0], lo), Math.min(full[1], hi)];
        apply();
      }, { passive: false });
      svg.addEventListener("mousedown", function (event) { dragging = { x: event.clientX, view: view.slice(), svg: svg }; });
      svg.addEventListener("mousemove", function (event) {
        readout.textContent = "tick " + Math.max(first, Math.ceil(tickAt(svg, event.clientX)));
      });
    });
    window.addEventListener("mousemove", function (event) {
      if (!dragging) { return; }
      var box = dragging.svg.getBoundingClientRect(), span = dragging.view[1] - dragging.view[0];
      var shift = -(event.clientX - dragging.x) / box.width * span;
      shift = Math.max(full[0] - dragging.view[0], Math.min(full[1] - dragging.view[1], shift));
      view = [dragging.view[0] + shift, dragging.view[1] + shift];
      apply();
    });
    window.addEventListener("mouseup", function () { dragging = null; });
  });
})();
