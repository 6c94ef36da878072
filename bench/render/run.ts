/**
 * Render benchmark (not a test): a 20-task scenario, half of the tasks
 * rendering templates, for 1,000 hosts. Reports wall time of render (the
 * service is loaded once, as the keeper caches it by commit) and peak
 * memory. Target: under 0.5 s. Writes bench/results/render.json.
 *
 *   node dist/bench/render/run.js [hosts]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadServiceFromDir, render } from '../../scenario';

function writeService(dir: string): void {
  const tasks: string[] = [];
  for (let i = 0; i < 20; i++) {
    if (i % 2 === 0) {
      tasks.push(
        `  - name: config ${i}\n    module: core.file.rendered\n    params:\n      path: "\${input.root}/etc/app-${i}.conf"\n      template: app.conf.tmpl\n      mode: "0644"\n      vars:\n        host: "\${soulprint.self.fqdn}"\n        port: "\${input.port + ${i}}"\n        peers: "\${input.peers}"\n        os: "\${soulprint.self.os_family}"\n    when: soulprint.self.os_family != "windows"\n    register: cfg_${i}`,
      );
    } else {
      tasks.push(
        `  - name: marker ${i}\n    module: core.file.present\n    params:\n      path: "\${input.root}/var/marker-${i}"\n      content: "host \${soulprint.self.fqdn} cpus \${soulprint.self.cpus}\\n"\n    onchanges: [config ${i - 1}]\n    when: cfg_${i - 1}.changed`,
      );
    }
  }
  const files: Record<string, string> = {
    'service.yml': 'name: bench\nstate_schema_version: 1\n',
    'scenario/create/main.yml': `input:\n  root: {type: string, default: /srv/app}\n  port: {type: integer, default: 8000}\n  peers: {type: list, default: [a.example.com, b.example.com, c.example.com]}\nserial: "25%"\nstate_changes:\n  sets:\n    port: "\${input.port}"\ntasks:\n${tasks.join('\n')}\n`,
    'templates/app.conf.tmpl':
      '# {{ .host }} ({{ .os | upper }})\nlisten = {{ .port }}\n{{- range $i, $p := .peers }}\npeer.{{ $i }} = {{ $p | quote }}\n{{- end }}\n{{ printf "%-10s|%5d" "port" .port }}\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

function main(): void {
  const hostsCount = Number(process.argv[2] ?? 1000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-bench-'));
  writeService(dir);
  const service = loadServiceFromDir(dir);
  if (service.errors.length) throw new Error(JSON.stringify(service.errors));
  const hosts = Array.from({ length: hostsCount }, (_, i) => ({
    sid: `host-${i}.example.com`,
    soulprint: { fqdn: `host-${i}.example.com`, os_family: 'debian', cpus: 2 + (i % 8), covens: ['app'] },
  }));
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const runs: number[] = [];
  let steps = 0;
  const rssBefore = process.memoryUsage().rss;
  for (let r = 0; r < 5; r++) {
    const t = performance.now();
    const result = render({ service, operation: 'create', input: {}, state: {}, hosts });
    runs.push(performance.now() - t);
    peak = Math.max(peak, process.memoryUsage().rss);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    steps = result.plan.hosts.reduce((n, h) => n + h.steps.length, 0);
  }
  clearInterval(sampler);
  fs.rmSync(dir, { recursive: true, force: true });
  const report = {
    node: process.version,
    hosts: hostsCount,
    tasks: 20,
    steps_per_render: steps,
    first_render_ms: Math.round(runs[0]!),
    best_render_ms: Math.round(Math.min(...runs)),
    median_render_ms: Math.round([...runs].sort((a, b) => a - b)[2]!),
    peak_rss_mb: Math.round(peak / 1048576),
    rss_before_mb: Math.round(rssBefore / 1048576),
    target_ms: 500,
  };
  const out = path.resolve(__dirname, '../../../bench/results/render.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(report, null, 2));
  console.log(JSON.stringify(report));
}

main();
