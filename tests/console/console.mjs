// The console in a real browser: Debian's chromium driven by Playwright, against a real
// `clearledger serve` on loopback that tests/it/console.rs starts (on SQLite, then on
// PostgreSQL) and describes in the environment:
//
//   CONSOLE_BASE         http://127.0.0.1:PORT
//   CONSOLE_KEY          an API key of the tenant signed in with
//   CONSOLE_OTHER_RUN    a run of another tenant (its page must be 404)
//   CONSOLE_FILE         a NACHA file to upload
//   CONSOLE_CONFLICT_RUN a run of the tenant with one conflict (record 2: its amount)
//   CONSOLE_HELD         how many held records are open (the first is posted)
//   CONSOLE_RECON_KEY    a key of a second tenant with a generated month to reconcile
//   CONSOLE_RECON_RULES  the month's rules (TOML), pasted into the form
//   CONSOLE_SHOTS        where each page's screenshots go (1280×800 and 390 px wide)
//   CHROMIUM             the browser (default /usr/bin/chromium)
//
// Each step prints one JSON line; the last line is {"ok":true,...} with what the Rust test
// checks against the ledger. Any failed expectation exits 1 with what was expected and
// what was found.
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const env = (k) => {
  const v = process.env[k];
  if (!v) fail(`the environment lacks ${k}`);
  return v;
};
function fail(why) {
  console.error(`console test failed: ${why}`);
  process.exit(1);
}
function expect(cond, what, found) {
  if (!cond) fail(`${what}; found ${JSON.stringify(found)}`);
}

const base = env("CONSOLE_BASE");
const shots = env("CONSOLE_SHOTS");
fs.mkdirSync(shots, { recursive: true });
const saved = [];

// A page's screenshots, wide and narrow, and the checks every page passes: nothing wider
// than a phone's screen at 390 px, every visible form control labelled.
// The pictures are of the page's top (at most 1,200 px): what a person sees first.
async function snap(page, name) {
  await page.setViewportSize({ width: 1280, height: 800 });
  const wide = path.join(shots, `${name}.png`);
  await page.screenshot({ path: wide, ...top(await page.evaluate(() => document.body.scrollHeight), 1280) });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - window.innerWidth,
  );
  expect(overflow <= 0, `${name}: the page fits 390 px without scrolling sideways`, overflow);
  const narrow = path.join(shots, `${name}-390.png`);
  await page.screenshot({ path: narrow, ...top(await page.evaluate(() => document.body.scrollHeight), 390) });
  await page.setViewportSize({ width: 1280, height: 800 });
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll("input, select, textarea")]
      .filter((e) => e.type !== "hidden" && e.labels.length === 0 && !e.getAttribute("aria-label"))
      .map((e) => e.name || e.id),
  );
  expect(unlabelled.length === 0, `${name}: every form control has a label`, unlabelled);
  saved.push(wide, narrow);
  step("page", { name, url: page.url() });
}

function top(height, width) {
  return { fullPage: true, clip: { x: 0, y: 0, width, height: Math.min(height, 1200) } };
}

function step(what, detail) {
  console.log(JSON.stringify({ step: what, ...detail }));
}

// The CSP forbids inline script and other origins: any violation the browser reports fails.
function watch(page) {
  page.on("console", (m) => {
    // A page answered 404 or 403 on purpose is reported as a failed load of itself.
    const own = m.text().startsWith("Failed to load resource") && m.location().url === page.url();
    if (m.type() === "error" && !own) fail(`the browser console said: ${m.text()} (${m.location().url})`);
  });
  page.on("pageerror", (e) => fail(`a script failed: ${e.message}`));
}

async function signIn(page, key = env("CONSOLE_KEY"), shot = "01-sign-in") {
  await page.goto(`${base}/console/runs`);
  expect(page.url().includes("/console/sign-in"), "a page without a session sends to sign-in", page.url());
  if (shot) await snap(page, shot);
  // By keyboard: the skip link, then the key's field.
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  const focused = await page.evaluate(() => document.activeElement.id);
  expect(focused === "api_key", "the second Tab reaches the API key field", focused);
  await page.keyboard.type(key);
  await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
  expect(page.url() === `${base}/console/runs`, "signing in goes where the browser was going", page.url());
  step("signed_in", {});
}

async function uploadTwice(page) {
  await page.goto(`${base}/console/upload`);
  const key = await page.textContent("[data-testid=idempotency-key]");
  await snap(page, "02-upload");
  await page.setInputFiles("#file", env("CONSOLE_FILE"));
  await Promise.all([page.waitForNavigation(), page.click("form.upload button[type=submit]")]);
  const first = page.url();
  expect(/\/console\/runs\/\d+$/.test(first), "an upload lands on its run", first);
  expect((await page.locator("[data-testid=replayed]").count()) === 0, "a first upload is no replay", first);
  // The browser's back button, and the same form sent again: the key it carries is the
  // one drawn when it was rendered.
  await page.goBack();
  const again = await page.textContent("[data-testid=idempotency-key]");
  expect(again === key, "going back shows the form with the same key", { key, again });
  await page.setInputFiles("#file", env("CONSOLE_FILE"));
  await Promise.all([page.waitForNavigation(), page.click("form.upload button[type=submit]")]);
  expect(page.url() === `${first}?replayed=1`, "the second send replays the first run", page.url());
  await page.waitForSelector("[data-testid=replayed]");
  step("uploaded_twice", { run: first, key });
  return Number(first.split("/").pop());
}

async function runAndRecords(page, run) {
  await page.goto(`${base}/console/runs/${run}`);
  const posted = Number(await page.textContent("[data-testid=posted]"));
  const rows = await page.locator("[data-testid=records] tbody tr").count();
  await snap(page, "03-run");
  await page.goto(`${base}/console/runs`);
  const runs = await page.locator("[data-testid=runs] tbody tr").count();
  await snap(page, "04-runs");
  await page.goto(`${base}/console/`);
  const postedToday = Number(await page.textContent("[data-testid=posted-today]"));
  await snap(page, "05-overview");
  step("run", { run, posted, rows, runs, postedToday });
  return { posted, rows, runs, postedToday };
}

// The uploaded run's first record looked up by its key: one posting, this run's.
async function lookupKey(page, run) {
  await page.goto(`${base}/console/runs/${run}`);
  const cell = await page.innerText("[data-testid=records] tbody tr:first-child td.id");
  const key = cell.trim().split(/\s/)[0];
  await page.goto(`${base}/console/lookup`);
  await page.selectOption("#by", "key");
  await page.fill("#value", key);
  await Promise.all([page.waitForNavigation(), page.click("form.filters button[type=submit]")]);
  const found = await page.locator("[data-testid=found] tbody tr").count();
  expect(found === 1, "a posting's key finds that posting", found);
  await snap(page, "06-lookup");
  step("lookup", { key, found });
}

async function isolation(page) {
  const other = env("CONSOLE_OTHER_RUN");
  const r = await page.goto(`${base}/console/runs/${other}`);
  expect(r.status() === 404, "another tenant's run is 404", r.status());
  await snap(page, "15-other-tenant-404");
  step("other_tenant", { status: r.status() });
}

async function conflict(page) {
  const run = env("CONSOLE_CONFLICT_RUN");
  await page.goto(`${base}/console/runs/${run}?outcome=conflict`);
  await Promise.all([page.waitForNavigation(), page.click("text=Side by side")]);
  const differs = await page.$$eval("[data-testid=conflict] tr[data-testid=differs]", (rows) =>
    rows.map((r) => [...r.children].map((c) => c.textContent.trim())),
  );
  expect(
    JSON.stringify(differs) === JSON.stringify([["amount differs", "1875.50 USD", "1875.51 USD"]]),
    "the conflict marks its amount, stored and new",
    differs,
  );
  await snap(page, "08-conflict");
  step("conflict", { differs });
}

// The first held record posted after its confirmation; the confirmation sent again says
// it was resolved already.
async function resolveHeld(page) {
  await page.goto(`${base}/console/held`);
  const cards = page.locator("section.held");
  const open = await cards.count();
  expect(open === Number(env("CONSOLE_HELD")), "every open held record is listed", open);
  await snap(page, "09-held");
  const card = cards.first();
  await card.locator("input[value=post]").check();
  await card.locator("textarea[name=reason]").fill("checked with the originator: a new payment");
  await card.locator("input[name=by]").fill("Ada Operator");
  await Promise.all([page.waitForNavigation(), card.locator("button[type=submit]").click()]);
  await snap(page, "10-held-confirm");
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=confirm]")]);
  const first = await page.textContent("[data-testid=resolution]");
  expect(first === "Resolved", "the confirmed decision is made", first);
  await snap(page, "11-held-resolved");
  await page.goBack();
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=confirm]")]);
  const second = await page.textContent("[data-testid=resolution]");
  expect(second === "Already resolved", "the same decision sent again is already resolved", second);
  await snap(page, "12-held-already-resolved");
  await page.goto(`${base}/console/held`);
  const left = await page.locator("section.held").count();
  expect(left === open - 1, "one held record fewer is open", left);
  step("held", { open, left });
  return left;
}

// Reverse the uploaded run: the preview's count, then the compensation run.
async function reverseRun(page, run) {
  await page.goto(`${base}/console/runs/${run}`);
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=reverse]")]);
  const toPost = Number(await page.textContent("[data-testid=to-post]"));
  await page.fill("#reason", "sent to the wrong ledger");
  await page.fill("#by", "Ada Operator");
  await snap(page, "13-reverse-preview");
  page.once("dialog", (d) => d.accept());
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=confirm-reverse]")]);
  const reversal = Number(page.url().split("/").pop());
  expect(reversal > run, "the reversal is a new run", page.url());
  const posted = Number(await page.textContent("[data-testid=posted]"));
  await snap(page, "14-reversal-run");
  // Back to the preview: nothing is left to reverse, and no button offers to.
  await page.goBack();
  const offered = await page.locator("[data-testid=confirm-reverse]").count();
  expect(offered === 0, "a reversed run offers no second reversal", offered);
  step("reversed", { toPost, reversal, posted });
  return { toPost, reversal, reversedPosted: posted };
}

// The second tenant's month: reconciled from the form, an ambiguous item opened, its
// candidates side by side; the account's statements; a UETR looked up.
async function reconcileMonth(page) {
  await signIn(page, env("CONSOLE_RECON_KEY"), null);
  await page.goto(`${base}/console/reconciliations`);
  await page.fill("#from", "2026-11-01");
  await page.fill("#to", "2026-11-30");
  await page.fill("#rules", fs.readFileSync(env("CONSOLE_RECON_RULES"), "utf8"));
  await snap(page, "17-reconciliations");
  await Promise.all([page.waitForNavigation(), page.click("form.stack button[type=submit]")]);
  expect(/\/console\/reconciliations\/\d+$/.test(page.url()), "a reconciliation lands on its run", page.url());
  const recon = Number(page.url().split("/").pop());
  const attention = Number(await page.textContent("[data-testid=attention]"));
  const firstOutcome = await page.textContent("[data-testid=items] tbody tr:first-child .status");
  expect(firstOutcome === "missing_ours", "missing_ours items come first", firstOutcome);
  await snap(page, "18-reconciliation");
  await page.selectOption("#outcome", "ambiguous");
  await Promise.all([page.waitForNavigation(), page.click("form.filters button[type=submit]")]);
  const ambiguous = await page.locator("[data-testid=items] tbody tr").count();
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=items] tbody tr:first-child a")]);
  const outcome = await page.textContent("[data-testid=item-outcome]");
  expect(outcome === "ambiguous", "the item opened is ambiguous", outcome);
  const ours = await page.locator("[data-testid=ours]").count();
  const theirs = await page.locator("[data-testid=theirs]").count();
  expect(ours >= 2 && theirs >= 2, "an ambiguous item's candidates on both sides", { ours, theirs });
  const amounts = async (sel) =>
    (await page.$$eval(sel, (els) => els.map((e) => e.textContent.trim()))).sort();
  const both = [await amounts("[data-testid=ours] strong"), await amounts("[data-testid=theirs] strong")];
  expect(JSON.stringify(both[0]) === JSON.stringify(both[1]), "candidates of one amount, signed alike", both);
  await snap(page, "19-ambiguous-item");
  const correction = await correct(page, recon);
  await page.goto(`${base}/console/statements`);
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=accounts] a")]);
  const statements = await page.locator("[data-testid=chain] tbody tr").count();
  await snap(page, "20-statements");
  step("reconciled", { recon, attention, ambiguous, ours, theirs, statements });
  return { recon, attention, ambiguous, ambiguousOurs: ours, ambiguousTheirs: theirs, statements, ...correction };
}

// An amount mismatch corrected: the preview's key and amount, the correction posted by a
// new reconciliation; the preview sent again posts nothing more.
async function correct(page, recon) {
  await page.goto(`${base}/console/reconciliations/${recon}?outcome=amount_mismatch`);
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=items] tbody tr:first-child a")]);
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=correct]")]);
  const key = (await page.textContent("[data-testid=correction-key]")).trim();
  const amount = (await page.textContent("[data-testid=correction-amount]")).trim();
  await snap(page, "21-correction-preview");
  page.once("dialog", (d) => d.accept());
  await Promise.all([page.waitForNavigation(), page.click("[data-testid=confirm-correction]")]);
  expect(page.url().includes(`?corrected=${recon}`), "the correction's run says so", page.url());
  await page.waitForSelector("[data-testid=corrected]");
  const correctedBy = Number(new URL(page.url()).pathname.split("/").pop());
  await snap(page, "22-corrected");
  // The same preview sent again: the item needs no correction now, nothing is posted.
  await page.goBack();
  page.once("dialog", (d) => d.accept());
  const [again] = await Promise.all([
    page.waitForNavigation(),
    page.click("[data-testid=confirm-correction]"),
  ]);
  expect(again.status() === 409, "the correction sent again is refused", again.status());
  const said = await page.textContent("main");
  expect(said.includes("corrected already"), "it says the item was corrected", said);
  step("corrected", { key, amount, correctedBy });
  return { correctionKey: key, correctionAmount: amount, correctedBy };
}

// A form posted without its CSRF token: the sign-out form, its token taken out.
async function csrfRefused(page) {
  await page.goto(`${base}/console/runs`);
  await page.evaluate(() => document.querySelector("form.who input[name=csrf]").remove());
  const [r] = await Promise.all([
    page.waitForNavigation(),
    page.click("form.who button[type=submit]"),
  ]);
  expect(r.status() === 403, "a form without its CSRF token is refused", r.status());
  await snap(page, "16-csrf-refused");
  // Still signed in: the refused form did nothing.
  const again = await page.goto(`${base}/console/runs`);
  expect(again.url() === `${base}/console/runs`, "the refused sign-out did not sign out", again.url());
  step("csrf_refused", { status: r.status() });
}

async function signOut(page) {
  await page.goto(`${base}/console/`);
  await Promise.all([page.waitForNavigation(), page.click("form.who button[type=submit]")]);
  const r = await page.goto(`${base}/console/runs`);
  expect(page.url().includes("/console/sign-in"), "after signing out a page asks to sign in", page.url());
  step("signed_out", { status: r.status() });
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  watch(page);
  await signIn(page);
  const run = await uploadTwice(page);
  const seen = await runAndRecords(page, run);
  await lookupKey(page, run);
  await conflict(page);
  const heldLeft = await resolveHeld(page);
  const reversed = await reverseRun(page, run);
  await isolation(page);
  await csrfRefused(page);
  await signOut(page);
  const month = await reconcileMonth(page);
  console.log(
    JSON.stringify({ ok: true, run, ...seen, heldLeft, ...reversed, ...month, screenshots: saved }),
  );
} finally {
  await browser.close();
}
