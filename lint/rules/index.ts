/** The rule registry: one file per rule, one line here. */
import type { Rule } from './types';
import { sl001 } from './sl001-yaml-syntax';
import { sl002 } from './sl002-repository-limits';
import { sl003 } from './sl003-service-manifest';
import { sl004 } from './sl004-no-version-field';
import { sl005 } from './sl005-create-scenario';
import { sl006 } from './sl006-migrations-present';
import { sl007 } from './sl007-scenario-schema';
import { sl008 } from './sl008-input-default-type';
import { sl009 } from './sl009-unknown-module';
import { sl010 } from './sl010-module-params';
import { sl011 } from './sl011-cel-syntax';
import { sl012 } from './sl012-undeclared-name';
import { sl013 } from './sl013-template-parse';
import { sl014 } from './sl014-template-interpolation';
import { sl015 } from './sl015-template-reference';
import { sl016 } from './sl016-task-references';
import { sl017 } from './sl017-interpolation-syntax';
import { sl018 } from './sl018-migration-schema';
import { sl019 } from './sl019-template-execution';
import { sl020 } from './sl020-run-input';
import { sl021 } from './sl021-expression-evaluation';
import { sl022 } from './sl022-expression-type';
import { sl023 } from './sl023-secret-path';
import { sl024 } from './sl024-secret-use';
import { sl025 } from './sl025-template-vars';
import { sl026 } from './sl026-suppression';
import { sl027 } from './sl027-module-use';
import { sl030 } from './sl030-module-contract';
import { sl031 } from './sl031-failure-budget';
import { sl032 } from './sl032-gate';
import { sl033 } from './sl033-unguarded-command';

export type { Rule } from './types';

export const RULES: readonly Rule[] = [
  sl001,
  sl002,
  sl003,
  sl004,
  sl005,
  sl006,
  sl007,
  sl008,
  sl009,
  sl010,
  sl011,
  sl012,
  sl013,
  sl014,
  sl015,
  sl016,
  sl017,
  sl018,
  sl019,
  sl020,
  sl021,
  sl022,
  sl023,
  sl024,
  sl025,
  sl026,
  sl027,
  sl030,
  sl031,
  sl032,
  sl033,
];

export const RULES_BY_ID: ReadonlyMap<string, Rule> = new Map(RULES.map((r) => [r.id, r]));
