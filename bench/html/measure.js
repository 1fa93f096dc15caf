// One interaction on the report page, timed in the page: [handler ms, ms to next frame].
// `i` varies the value per run so no result is cached.
([kind, i]) => new Promise((done) => {
  const $ = (id) => document.getElementById(id);
  const choose = (id, index) => {
    const select = $(id);
    select.selectedIndex = 1 + (index % (select.options.length - 1));
    select.dispatchEvent(new Event("change"));
  };
  const search = (value) => {
    $("f-q").value = value;
    $("f-q").dispatchEvent(new Event("input"));
  };
  const t0 = performance.now();
  if (kind === "search") search("session-0" + (100 + i));
  if (kind === "search-clear") search("");
  if (kind === "metric") choose("f-metric", i);
  if (kind === "label") choose("f-label", i);
  if (kind === "category") choose("f-category", i);
  if (kind === "clear") $("f-clear").click();
  if (kind === "next-page") $("next").click();
  if (kind === "bar") document.querySelectorAll("#ranking tr.bar")[i % 5].click();
  const t1 = performance.now();
  requestAnimationFrame(() => setTimeout(() => done([t1 - t0, performance.now() - t0]), 0));
})
