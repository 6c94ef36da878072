// A checkout's prebuilt workflow bundle (runs/bundle.ts) is used only while it was made from the
// compiled workflow files and the lockfile there now: a keeper must never run stale workflow code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkoutBundleIsCurrent, workflowSourcesDigest } from './bundle';

describe('the checkout workflow bundle is used only while current', () => {
  let dir: string;
  let at: { bundle: string; manifest: string; entry: string; lockfile: string };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-'));
    fs.mkdirSync(path.join(dir, 'workflows'));
    fs.writeFileSync(path.join(dir, 'workflows', 'index.js'), 'exports.a = require("./run");\n');
    fs.writeFileSync(path.join(dir, 'workflows', 'run.js'), 'const m = require("../messages");\n');
    fs.writeFileSync(path.join(dir, 'messages.js'), 'exports.x = 1;\n');
    fs.writeFileSync(path.join(dir, 'package-lock.json'), '{"lockfileVersion":3}\n');
    at = {
      bundle: path.join(dir, 'b.js'),
      manifest: path.join(dir, 'b.json'),
      entry: path.join(dir, 'workflows', 'index.js'),
      lockfile: path.join(dir, 'package-lock.json'),
    };
    fs.writeFileSync(at.bundle, '/* bundle */');
    fs.writeFileSync(at.manifest, JSON.stringify({ digest: workflowSourcesDigest(at.entry, at.lockfile) }));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is current as built, and stale once a file it was made from changed, however deep', () => {
    assert.equal(checkoutBundleIsCurrent(at), true);
    fs.appendFileSync(path.join(dir, 'messages.js'), 'exports.y = 2;\n');
    assert.equal(checkoutBundleIsCurrent(at), false);
  });

  it('is stale when the lockfile changed (the npm packages bundled with the workflows)', () => {
    fs.writeFileSync(at.lockfile, '{"lockfileVersion":3,"packages":{}}\n');
    assert.equal(checkoutBundleIsCurrent(at), false);
  });

  it('is not used without its manifest (a build cut short) or without the bundle itself', () => {
    fs.rmSync(at.manifest);
    assert.equal(checkoutBundleIsCurrent(at), false);
    fs.writeFileSync(at.manifest, JSON.stringify({ digest: workflowSourcesDigest(at.entry, at.lockfile) }));
    fs.rmSync(at.bundle);
    assert.equal(checkoutBundleIsCurrent(at), false);
  });

  it('ignores files the workflows do not require', () => {
    fs.writeFileSync(path.join(dir, 'unrelated.js'), 'exports.z = 3;\n');
    assert.equal(checkoutBundleIsCurrent(at), true);
  });
});
