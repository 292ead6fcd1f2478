// Clicking an arrow shows that packet's decoding (j and k step through the packets); clicking
// a band shows or hides its packets, moving the rows below it. Rows keep their collapsed position in data-y, so the layout is
// recomputed from scratch on every toggle.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("explanations").textContent);
  var svg = document.getElementById("ladder");
  var explain = document.getElementById("explain");
  var title = document.getElementById("panel-title");
  var rows = Array.prototype.slice.call(svg.querySelectorAll("#rows > g.row"));
  var lanes = svg.querySelectorAll("line.lane");
  var selected = null;

  function show(pkt) {
    var frame = pkt.getAttribute("data-frame");
    var lines = data.frames[frame] || [];
    explain.textContent = lines.map(function (i) { return data.lines[i]; }).join("\n");
    title.textContent = "Frame " + frame;
    if (selected) selected.classList.remove("selected");
    selected = pkt;
    pkt.classList.add("selected");
  }

  function relayout() {
    var shift = 0;
    rows.forEach(function (row) {
      row.setAttribute("transform", "translate(0," + (Number(row.getAttribute("data-y")) + shift) + ")");
      if (row.classList.contains("open")) {
        shift += Number(row.getAttribute("data-hx")) - Number(row.getAttribute("data-h"));
      }
    });
    var h = Number(svg.getAttribute("data-h")) + shift;
    svg.setAttribute("height", h);
    svg.setAttribute("viewBox", "0 0 " + svg.getAttribute("data-w") + " " + h);
    Array.prototype.forEach.call(lanes, function (lane) {
      lane.setAttribute("y2", Number(lane.getAttribute("data-y2")) + shift);
    });
  }

  function toggle(band) {
    var row = band.closest("g.row");
    var open = row.classList.toggle("open");
    row.querySelector("g.members").setAttribute("display", open ? "inline" : "none");
    relayout();
  }

  // The packets a reader can see: those of closed bands are hidden.
  function visiblePackets() {
    return Array.prototype.filter.call(svg.querySelectorAll("g.pkt"), function (g) {
      var members = g.closest("g.members");
      return !members || members.getAttribute("display") !== "none";
    });
  }

  // j and k step to the next and the previous packet, as in a mail reader.
  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "j" && ev.key !== "k") return;
    var all = visiblePackets();
    var i = all.indexOf(selected);
    var next = all[ev.key === "j" ? i + 1 : i - 1];
    if (!next) return;
    show(next);
    next.scrollIntoView({block: "nearest"});
  });

  // The time column moves with a horizontal scroll, so every row keeps its time in view.
  var main = document.getElementById("diagram");
  main.addEventListener("scroll", function () {
    document.documentElement.style.setProperty("--scroll-x", main.scrollLeft + "px");
  });

  svg.addEventListener("click", function (ev) {
    var pkt = ev.target.closest("g.pkt");
    if (pkt) {
      show(pkt);
      return;
    }
    var band = ev.target.closest("g.band");
    if (band) toggle(band);
  });
})();
