// check.mjs - fragbench's HTML pages opened from disk in a headless Chromium (playwright-core
// driving the distribution's /usr/bin/chromium; CHROMIUM= another). Run by tests/browser/run.sh:
//   node check.mjs OUTDIR explain PAGE.html BLOCKS.csv | report PAGE.html REPORT.md  [...more]
// For every page: no console error, no uncaught exception, no request that leaves the file
// (anything but file: and data: is refused and fails the page), and a full-page screenshot
// OUTDIR/<page>.png (and <page>-hover.png: the window while a block or mark is hovered). An explain page: its drawn blocks equal `--blocks-csv`'s rows one for
// one (strategy, segment, offset, size, state, stream) and its segments the CSV's; hovering
// a block shows its size, state, stream and, where the CSV has one, its allocating stack.
// A report: one figure per picture report.md embeds, each chart drawn with marks, as many
// headings and tables as report.md has; hovering a mark shows its figure; hiding a
// strategy removes its marks from every chart and its table rows, showing it brings them back.
// Prints one line per check; exit 1 when any failed.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

const [out, ...jobs] = process.argv.slice(2);
let failed = 0, passed = 0;
function check(ok, what) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  return ok;
}

// RFC 4180 CSV, as explain_csv.c writes it
function parseCsv(text) {
  const rows = []; let row = [], f = '', q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) { if (c === '"') { if (text[i + 1] === '"') { f += '"'; i++; } else q = false; } else f += c; }
    else if (c === '"') q = true;
    else if (c === ',') { row.push(f); f = ''; }
    else if (c === '\n') { row.push(f); rows.push(row); row = []; f = ''; }
    else f += c;
  }
  if (f || row.length) { row.push(f); rows.push(row); }
  const head = rows.shift();
  return rows.map(r => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}
// fmt_bytes / fbBytes: "8.00 MiB"
function bytes(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; let v = Number(n), i = 0;
  while (v >= 1024 && i < 4) { v /= 1024; i++; }
  return i ? `${v.toFixed(2)} ${u[i]}` : `${v} B`;
}

async function open(browser, file, name) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  const errors = [], offsite = [];
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', e => errors.push(String(e)));
  await page.route('**/*', r => {
    const u = r.request().url();
    if (u.startsWith('file:') || u.startsWith('data:')) return r.continue();
    offsite.push(u);
    return r.abort();
  });
  await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
  await page.waitForTimeout(200);
  return { page, errors, offsite, done: async () => {
    check(errors.length === 0, `${name}: no console errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
    check(offsite.length === 0, `${name}: nothing fetched from outside the file${offsite.length ? ': ' + offsite.join(' ') : ''}`);
    const shot = path.join(out, name + '.png');
    await page.screenshot({ path: shot, fullPage: true });
    check(fs.statSync(shot).size > 10000, `${name}: screenshot ${shot}`);
    await page.close();
  } };
}

async function explainPage(browser, file, csvFile) {
  const name = path.basename(file, '.html');
  const want = parseCsv(fs.readFileSync(csvFile, 'utf8'));
  const { page, done } = await open(browser, file, name);
  const panels = await page.$$eval('section.panel', ps => ps.map(p => ({
    strategy: p.dataset.strategy,
    segments: [...p.querySelectorAll('.seg')].map(s => ({ seg: +s.dataset.seg, n: +s.dataset.nblocks, drawn: s.querySelectorAll('rect.block').length })),
    blocks: [...p.querySelectorAll('rect.block')].map(r => ({ seg: r.dataset.seg, off: r.dataset.off, size: r.dataset.size, state: r.dataset.state,
      stream: r.dataset.stream, w: +r.getAttribute('width') })),
  })));
  const strategies = [...new Set(want.map(r => r.strategy))];
  check(panels.length >= 1 && panels.length === Math.max(1, strategies.length), `${name}: ${panels.length} strategy panel(s), the CSV has ${strategies.length}`);
  const allRects = await page.$$eval('rect', rs => rs.length);
  check(allRects === want.length, `${name}: ${allRects} <rect>s on the page, ${want.length} blocks in the CSV`);
  for (const p of panels) {
    const rows = want.filter(r => r.strategy === p.strategy);
    check(p.blocks.length === rows.length, `${name} ${p.strategy}: ${p.blocks.length} blocks drawn, ${rows.length} in the snapshot's state`);
    let same = p.blocks.length === rows.length, first = '';
    rows.forEach((r, i) => {
      const b = p.blocks[i];
      if (!b || b.seg !== r.segment || b.off !== r.offset || b.size !== r.size || b.state !== r.state || b.stream !== r.stream || !(b.w > 0)) {
        if (!first) first = ` (first difference: block ${i + 1}: drawn ${JSON.stringify(b)}, CSV ${JSON.stringify(r)})`;
        same = false;
      }
    });
    check(same, `${name} ${p.strategy}: every block one for one (segment, offset, size, state, stream)${first}`);
    const segs = new Set(rows.map(r => r.segment));
    check(p.segments.length === segs.size && p.segments.every(s => s.n === s.drawn && s.n === rows.filter(r => +r.segment === s.seg).length),
      `${name} ${p.strategy}: ${p.segments.length} segments drawn, ${segs.size} in the CSV, each with its blocks`);
  }
  // the text explain printed beside them (run.sh keeps it as NAME.txt): its counts, strategy by strategy
  const txtFile = csvFile.replace(/\.csv$/, '.txt');
  if (fs.existsSync(txtFile)) {
    const said = [...fs.readFileSync(txtFile, 'utf8').matchAll(/^  (\d+) blocks? in (\d+) segments? \(/gm)].map(m => [+m[1], +m[2]]);
    const drawn = panels.filter(p => p.blocks.length).map(p => [p.blocks.length, p.segments.length]);
    check(JSON.stringify(said) === JSON.stringify(drawn), `${name}: the text's counts ${JSON.stringify(said)} are the page's ${JSON.stringify(drawn)} (blocks, segments)`);
  }
  // hover: the largest allocated block with a stack (else the largest block)
  const withFrames = want.filter(r => r.frames && r.state === 'allocated');
  const pick = (withFrames.length ? withFrames : want).filter(r => r.strategy === (panels[0] || {}).strategy)
    .sort((a, b) => b.size - a.size)[0];
  if (pick) {
    const loc = page.locator(`section.panel[data-strategy="${pick.strategy}"] .seg[data-seg="${pick.segment}"] rect.block[data-off="${pick.offset}"]`);
    await loc.scrollIntoViewIfNeeded();
    const box = await loc.boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForTimeout(100);
    const tip = await page.$eval('#fbtip', t => (getComputedStyle(t).display !== 'none' ? t.innerText : ''));
    const details = await page.$eval(`section.panel[data-strategy="${pick.strategy}"] .details`, d => d.innerText);
    check(tip.includes(bytes(pick.size)) && tip.includes(pick.state) && tip.includes('stream ' + pick.stream),
      `${name}: hovering block ${pick.segment}/${pick.offset} shows its size ${bytes(pick.size)}, state and stream: "${tip.split('\n')[0]}"`);
    if (pick.frames) {
      const frames = pick.frames.split('; '), frame = frames.find(f => /\.py:\d+\)$/.test(f)) || frames[0];   // the tooltip leads with Python frames
      check(tip.includes(frame) && details.includes(frame), `${name}: ... and the stack that allocated it ("${frame}")`);
    } else if (pick.state === 'allocated') {
      check(tip.includes('no stack recorded'), `${name}: ... and says no stack was recorded for it`);
    }
    await page.screenshot({ path: path.join(out, name + '-hover.png') });
    await page.mouse.move(5, 5);
  }
  // a page with a request: it is drawn against the largest free block
  const fit = await page.$$eval('.fitbox', f => f.map(x => x.innerText));
  if (fit.length) check(fit.every(t => t.includes('request (rounded)') && t.includes('largest free block')), `${name}: the request drawn against the largest free block`);
  await done();
}

async function reportPage(browser, file, mdFile) {
  const name = path.basename(path.dirname(file)) + '-report';
  const md = fs.readFileSync(mdFile, 'utf8').split('\n');
  const { page, done } = await open(browser, file, name);
  const images = md.filter(l => /^!\[.*\]\(.*\)$/.test(l)).length;
  const headings = md.filter(l => /^#{1,6} /.test(l)).length;
  const tables = md.filter((l, i) => l.startsWith('|') && !(md[i - 1] || '').startsWith('|')).length;
  const got = await page.evaluate(() => ({
    figures: document.querySelectorAll('main figure:not(.extra figure)').length,
    extra: document.querySelectorAll('.extra figure').length,
    charts: [...document.querySelectorAll('figure.chart')].map(f => ({ plot: f.dataset.plot, marks: f.querySelectorAll('svg .mark, svg path.tline').length,
      text: f.querySelector('.chartbody').innerText })),
    headings: document.querySelectorAll('main h1,main h2,main h3,main h4,main h5,main h6').length - document.querySelectorAll('.extra h2').length,
    tables: document.querySelectorAll('main table').length,
    plots: JSON.parse(document.getElementById('fb-plots').textContent).length,
  }));
  check(got.figures === images, `${name}: ${got.figures} figures inline, report.md embeds ${images} pictures`);
  check(got.charts.length === got.plots, `${name}: every plot with data drawn (${got.charts.length} charts, ${got.plots} plots in the data${got.extra ? `, ${got.extra} of them after report.md's text` : ''})`);
  check(got.charts.length > 0 && got.charts.every(c => c.marks > 0 && !/could not be drawn|no data/.test(c.text)),
    `${name}: ${got.charts.length} charts drawn as SVG from the plot data, each with marks (${got.charts.map(c => c.plot + ':' + c.marks).join(' ')})`);
  check(got.headings === headings && got.tables === tables, `${name}: ${got.headings} headings and ${got.tables} tables, report.md has ${headings} and ${tables}`);
  const imgs = await page.$$eval('main img', is => is.map(i => ({ src: i.getAttribute('src').slice(0, 11), ok: i.complete && i.naturalWidth > 0 })));
  check(imgs.every(i => i.src.startsWith('data:image/') && i.ok), `${name}: ${imgs.length} other pictures inline (data: URLs), each decoded`);
  // explain's pages, inline (iframe srcdoc): their blocks drawn, a hover shows one
  for (const handle of await page.$$('iframe.explain')) {
    const fr = await handle.contentFrame();
    const n = await fr.$$eval('rect.block', rs => rs.length);
    const segs = await fr.$$eval('.panel', ps => ps.map(p => +p.dataset.nblocks));
    let tip = '';
    if (n) {
      const big = fr.locator('rect.block').first();
      await handle.scrollIntoViewIfNeeded();
      await big.scrollIntoViewIfNeeded();
      await big.hover({ force: true });
      await page.waitForTimeout(100);
      tip = await fr.$eval('#fbtip', t => (getComputedStyle(t).display !== 'none' ? t.innerText : ''));
    }
    check(n > 0 && n === segs.reduce((a, b) => a + b, 0) && /state \w+ · stream \d+/.test(tip),
      `${name}: explain's page inline with its ${n} blocks; hover: "${tip.split('\n').slice(0, 2).join(' / ')}"`);
  }
  // hover a mark of the first chart
  const mark = page.locator('figure.chart .mark').first();
  await mark.scrollIntoViewIfNeeded();
  const mb = await mark.boundingBox();
  await page.mouse.move(mb.x + mb.width / 2, mb.y + mb.height / 2);
  await page.waitForTimeout(100);
  const tip = await page.$eval('#fbtip', t => (getComputedStyle(t).display !== 'none' ? t.innerText : ''));
  check(/\d/.test(tip) && tip.length > 5, `${name}: hovering a mark shows its figure: "${tip.replace(/\n/g, ' / ')}"`);
  await page.screenshot({ path: path.join(out, name + '-hover.png') });
  // hide a strategy that has marks and table rows, then show it again
  const strat = await page.evaluate(() => {
    const c = {};
    document.querySelectorAll('figure.chart svg [data-strategy]').forEach(e => { c[e.dataset.strategy] = (c[e.dataset.strategy] || 0) + 1; });
    return Object.keys(c).find(s => document.querySelector(`tr[data-strategy="${CSS.escape(s)}"]`)) || Object.keys(c)[0];
  });
  const count = () => page.evaluate(s => ({
    marks: document.querySelectorAll(`figure.chart svg [data-strategy="${CSS.escape(s)}"]`).length,
    rows: [...document.querySelectorAll(`tr[data-strategy="${CSS.escape(s)}"]`)].filter(r => r.offsetParent !== null).length,
  }), strat);
  const before = await count();
  await page.locator(`#strategies input[value="${strat}"]`).uncheck();
  const hiddenNow = await count();
  await page.locator(`#strategies input[value="${strat}"]`).check();
  const after = await count();
  check(before.marks > 0 && hiddenNow.marks === 0 && hiddenNow.rows === 0 && after.marks === before.marks && after.rows === before.rows,
    `${name}: hiding ${strat} removes its ${before.marks} marks and ${before.rows} table rows; showing it brings them back (${after.marks}, ${after.rows})`);
  await done();
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  for (let i = 0; i < jobs.length;) {
    const kind = jobs[i++], a = jobs[i++], b = jobs[i++];
    if (kind === 'explain') await explainPage(browser, a, b);
    else if (kind === 'report') await reportPage(browser, a, b);
    else { check(false, `unknown job ${kind}`); break; }
  }
} catch (e) {
  check(false, 'the browser test itself: ' + (e && e.stack || e));
} finally {
  await browser.close();
}
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
