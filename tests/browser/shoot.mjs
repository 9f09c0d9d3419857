// shoot.mjs - dev helper: node shoot.mjs FILE.html OUT.png [width] [y] [height]
import { chromium } from 'playwright-core';
const [file, out, w = '1400', y = '0', h = '1000'] = process.argv.slice(2);
const b = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const p = await b.newPage({ viewport: { width: +w, height: +h } });
p.on('console', m => { if (m.type() === 'error') console.log('console error:', m.text()); });
p.on('pageerror', e => console.log('page error:', e.message));
await p.goto('file://' + file);
await p.evaluate(yy => window.scrollTo(0, yy), +y);
await p.screenshot({ path: out });
await b.close();
