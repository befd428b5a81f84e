"""A page opened in a real headless browser (Debian's chromium, driven through chromium-driver by
Selenium): what a reader would see broken. Used by test_report_browser.py."""

from __future__ import annotations

import shutil
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

# Run in the page once it has loaded: every image loaded and drawn with a size; every table drawn,
# with a header row and data rows as wide as it (colspans counted); each problem one line.
CHECK_PAGE = """
const problems = [];
for (const img of document.images) {
  const src = img.getAttribute('src');
  if (!img.complete || img.naturalWidth === 0) problems.push(`image ${src} did not load`);
  else if (img.getBoundingClientRect().width === 0) problems.push(`image ${src} is not drawn`);
}
const width = row => [...row.cells].reduce((n, c) => n + c.colSpan, 0);
[...document.querySelectorAll('table')].forEach((t, i) => {
  let heading = t.previousElementSibling;
  while (heading && !/^H[1-6]$/.test(heading.tagName)) heading = heading.previousElementSibling;
  const name = `table ${i + 1}` + (heading ? ` (under "${heading.textContent.trim()}")` : '');
  const rows = [...t.rows];
  if (rows.length < 2) problems.push(`${name} has no data rows`);
  if (rows.length && rows[0].querySelectorAll('th').length === 0) problems.push(`${name} has no header row`);
  rows.forEach((r, k) => {
    if (width(r) !== width(rows[0])) problems.push(`${name} row ${k}: ${width(r)} cells, its header ${width(rows[0])}`);
  });
  const box = t.getBoundingClientRect();
  if (box.width === 0 || box.height === 0) problems.push(`${name} is not drawn`);
});
return problems;
"""


def page_problems(page: Path, timeout: float = 60) -> list[str]:
    """What is broken in `page` as the browser shows it: images, tables, and the console's errors."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,2000",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.set_page_load_timeout(timeout)
        driver.get(page.resolve().as_uri())
        WebDriverWait(driver, timeout).until(lambda d: d.execute_script("return document.readyState") == "complete")
        problems = list(driver.execute_script(CHECK_PAGE))
        problems += [f"console: {e['message']}" for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        return problems
    finally:
        driver.quit()
