#!/usr/bin/env node
// Prebuilds the keeper's workflow bundle into dist/runs/workflow-bundle.checkout.js (run by scripts/build-extra.sh, so by
// `make build`), with the manifest runs/bundle.ts checks before using it: every keeper started from
// this checkout (the demo's, each test keeper, every `bin/keeper run` a test spawns) then reads it
// instead of spending seconds to minutes of CPU in webpack at each start. Skipped when the bundle is
// already current.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist', 'runs', 'bundle.js');
const b = require(dist);
if (b.checkoutBundleIsCurrent()) process.exit(0);
const t0 = Date.now();
const digest = b.workflowSourcesDigest();
b.buildWorkflowBundle()
  .then((code) => {
    // The bundle first, its manifest last: a build cut short leaves no manifest naming a bundle it did not write.
    fs.rmSync(b.CHECKOUT_MANIFEST, { force: true });
    fs.writeFileSync(`${b.CHECKOUT_BUNDLE}.tmp`, code);
    fs.renameSync(`${b.CHECKOUT_BUNDLE}.tmp`, b.CHECKOUT_BUNDLE);
    fs.writeFileSync(b.CHECKOUT_MANIFEST, `${JSON.stringify({ digest }, null, 1)}\n`);
    process.stdout.write(
      `workflow bundle prebuilt into dist/runs (${Math.round(code.length / 1024)} KiB, ${((Date.now() - t0) / 1000).toFixed(1)} s)\n`,
    );
  })
  .catch((err) => {
    process.stderr.write(`build: cannot bundle the workflows: ${err.message}\n`);
    process.exit(1);
  });
