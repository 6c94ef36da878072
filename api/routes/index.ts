// The route table: every Operator API route, in the order the OpenAPI document lists them.
// Adding a resource is one file in this folder and one line here; the route x role test, the
// OpenAPI document and the fuzzing tests pick it up from `allRoutes`.
import type { RouteDef } from '../route';
import { activityRoutes } from './activity';
import { archonRoutes } from './archons';
import { incarnationEdgeRoutes } from './incarnation-edges';
import { incarnationRoutes } from './incarnations';
import { overviewRoutes } from './overview';
import { driftRoutes } from './drift';
import { executionPreviewRoutes } from './execution-preview';
import { executionRoutes } from './executions';
import { planRoutes } from './plans';
import { runEventRoutes } from './run-events';
import { runGateRoutes } from './run-gates';
import { runRoutes } from './runs';
import { serviceVersionRoutes } from './service-versions';
import { serviceRoutes } from './services';
import { soulCovenRoutes } from './soul-covens';
import { soulRoutes } from './souls';

export const allRoutes: readonly RouteDef[] = [
  // Souls first: the API reference opens on its first tag, and registering a host is where a reader starts.
  ...soulRoutes,
  ...soulCovenRoutes,
  ...serviceRoutes,
  ...serviceVersionRoutes,
  ...incarnationRoutes,
  ...runRoutes,
  ...incarnationEdgeRoutes,
  ...planRoutes,
  ...driftRoutes,
  ...runEventRoutes,
  ...executionPreviewRoutes,
  ...runGateRoutes,
  ...executionRoutes,
  ...archonRoutes,
  ...activityRoutes,
  ...overviewRoutes,
];

export { archonRoutes, serviceRoutes, soulRoutes };
