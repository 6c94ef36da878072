/**
 * Loads a service from a directory (a checkout, or a commit materialised by
 * the git loader): service.yml, scenario/<operation>/main.yml,
 * templates/**.tmpl, migrations/<version>.yml and modules/<module>/module.yml. Content problems do not
 * throw: they are collected in `service.errors` (all of them, so soul-lint
 * reports everything at once) and render refuses a service that has any.
 * Only a missing or unreadable directory throws.
 */
import * as fs from 'node:fs';
import { RepoFs } from './repo-fs';
import { buildMigration, buildScenario } from './build';
import { parseYaml, type YNode } from '../yaml/parse';
import { child, pair } from '../yaml/node';
import { validateNode } from '../schema/validate';
import { checkSecrets } from '../secrets/check';
import { migrationSchema, scenarioSchema, serviceSchema } from '../schema/schemas';
import { makeError, ScenarioError, sortErrors } from '../errors';
import { LineIndex } from '../yaml/line-index';
import { compileTemplate, findInterpolationMarkers } from '../template';
import type { LoadedService, TemplateFile } from '../model';
import { checkService } from '../check/service';
import { loadServiceModules } from './modules';

export const RULES = {
  serviceSchema: 'SL003',
  versionField: 'SL004',
  missingCreate: 'SL005',
  missingMigration: 'SL006',
  scenarioSchema: 'SL007',
  templateParse: 'SL013',
  templateInterpolation: 'SL014',
  migrationSchema: 'SL018',
} as const;

export class ServiceDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceDirError';
  }
}

export function loadServiceFromDir(dir: string): LoadedService {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new ServiceDirError(`${dir} is not a directory`);
  const repo = new RepoFs(dir);
  const service: LoadedService = {
    root: repo.root,
    name: '',
    stateSchemaVersion: 1,
    scenarios: new Map(),
    templates: new Map(),
    migrations: new Map(),
    errors: [],
  };
  const errors = service.errors;
  const guard = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (e) {
      if (e instanceof ScenarioError) {
        errors.push(e.toRenderError());
        return undefined;
      }
      throw e;
    }
  };
  const readYaml = (rel: string): YNode | null | undefined => guard(() => parseYaml(repo.readText(rel), rel));

  // service.yml
  if (!guard(() => repo.exists('service.yml'))) {
    errors.push(
      makeError(
        { file: 'service.yml', line: 1, col: 1 },
        RULES.serviceSchema,
        'service.yml is missing',
        'add service.yml with `name` and `state_schema_version`',
      ),
    );
  } else {
    const doc = readYaml('service.yml');
    if (doc === null)
      errors.push(
        makeError(
          { file: 'service.yml', line: 1, col: 1 },
          RULES.serviceSchema,
          'service.yml is empty',
          'add `name` and `state_schema_version`',
        ),
      );
    if (doc) {
      const version = pair(doc, 'version');
      if (version) {
        errors.push(
          makeError(
            version.key.pos,
            RULES.versionField,
            "service.yml has a `version` field; a service's version is its git ref (tag or branch)",
            'remove `version` and tag or branch the repository instead',
          ),
        );
      }
      errors.push(...validateNode(serviceSchema, doc, RULES.serviceSchema, 'service.yml'));
      const name = child(doc, 'name');
      if (name?.kind === 'scalar') service.name = name.text;
      const ssv = child(doc, 'state_schema_version');
      if (ssv?.kind === 'scalar' && Number.isInteger(ssv.value) && (ssv.value as number) >= 1)
        service.stateSchemaVersion = ssv.value as number;
      const secrets = child(doc, 'secrets');
      if (secrets?.kind === 'seq')
        service.secretPrefixes = secrets.items
          .filter((n) => n.kind === 'scalar')
          .map((n) => String((n as { value: unknown }).value));
    }
  }

  // scenario/<operation>/main.yml
  const mains = guard(() => repo.list('scenario', 'main.yml')) ?? [];
  for (const rel of mains) {
    const m = /^scenario\/([a-z0-9][a-z0-9_-]*)\/main\.yml$/.exec(rel);
    if (!m) continue;
    const doc = readYaml(rel);
    if (doc === undefined) continue;
    if (doc === null) {
      errors.push(
        makeError({ file: rel, line: 1, col: 1 }, RULES.scenarioSchema, `${rel} is empty`, 'add a `tasks` list'),
      );
      continue;
    }
    const schemaErrors = validateNode(scenarioSchema, doc, RULES.scenarioSchema, rel);
    errors.push(...schemaErrors);
    if (schemaErrors.length === 0) service.scenarios.set(m[1]!, buildScenario(m[1]!, rel, doc));
  }
  if (!mains.includes('scenario/create/main.yml')) {
    errors.push(
      makeError(
        { file: 'scenario/create/main.yml', line: 1, col: 1 },
        RULES.missingCreate,
        'scenario/create/main.yml is missing; it runs when an incarnation is created',
        'add scenario/create/main.yml',
      ),
    );
  }

  // templates/**.tmpl
  for (const rel of guard(() => repo.list('templates', '.tmpl')) ?? []) {
    const source = guard(() => repo.readText(rel));
    if (source === undefined) continue;
    const t: TemplateFile = { name: rel.slice('templates/'.length), file: rel, source };
    const lines = new LineIndex(source, rel);
    for (const off of findInterpolationMarkers(source)) {
      errors.push(
        makeError(
          lines.pos(off),
          RULES.templateInterpolation,
          '`${...}` is scenario interpolation and does not work inside a .tmpl file',
          'use template syntax such as {{ .name }} and pass the value in `vars`',
        ),
      );
    }
    const c = compileTemplate(source);
    if (c.ok) t.set = c.value;
    else
      errors.push(
        makeError(
          lines.pos(c.offset),
          RULES.templateParse,
          `template parse error: ${c.message}`,
          templateFix(c.message),
        ),
      );
    service.templates.set(t.name, t);
  }

  // migrations/<version>.yml
  for (let v = 2; v <= service.stateSchemaVersion; v++) {
    const rel = `migrations/${v}.yml`;
    if (!guard(() => repo.exists(rel))) {
      errors.push(
        makeError(
          { file: 'service.yml', ...versionPos(repo) },
          RULES.missingMigration,
          `state_schema_version is ${service.stateSchemaVersion} but ${rel} is missing`,
          `add ${rel} with state_changes.sets migrating state from version ${v - 1}`,
        ),
      );
      continue;
    }
    const doc = readYaml(rel);
    if (!doc) {
      if (doc === null)
        errors.push(
          makeError({ file: rel, line: 1, col: 1 }, RULES.migrationSchema, `${rel} is empty`, 'add state_changes.sets'),
        );
      continue;
    }
    const schemaErrors = validateNode(migrationSchema, doc, RULES.migrationSchema, rel);
    errors.push(...schemaErrors);
    if (schemaErrors.length === 0) service.migrations.set(v, buildMigration(v, rel, doc));
  }

  // modules/<module>/module.yml: modules shipped with the service, before the tasks that use them are checked.
  loadServiceModules(repo, service, errors);

  errors.push(...checkService(service));
  errors.push(...checkSecrets(service));
  sortErrors(errors);
  return service;
}

function versionPos(repo: RepoFs): { line: number; col: number } {
  try {
    const doc = parseYaml(repo.readText('service.yml'), 'service.yml');
    const p = pair(doc, 'state_schema_version');
    if (p) return { line: p.value.pos.line, col: p.value.pos.col };
  } catch {
    // reported elsewhere
  }
  return { line: 1, col: 1 };
}

function templateFix(message: string): string {
  const fn = /function "([^"]+)" not defined/.exec(message);
  if (fn) return `"${fn[1]}" is not in the template function set; see docs/scenario.md for the functions available`;
  if (/undefined variable/.test(message)) return 'declare the variable with := before using it';
  return 'fix the template syntax (Go text/template)';
}
