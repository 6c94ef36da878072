// keeperctl as an operator uses it: the real program (bin/keeperctl) in its own process against a
// test keeper on the real stack, with a real soul applying a real service from git. Every command's
// happy path, each class of failure with its exit code, --output json/yaml parsed, and the live
// progress display in a real pseudo-terminal (tmux). The tests are in keeperctl-<resource>.ts; they
// share one keeper (keeperctl-rig.ts) and run in this order, each group building on the earlier ones.
import { accessTests, clustersTests } from './keeperctl-access';
import { incarnationsTests } from './keeperctl-incarnations';
import { plansTests } from './keeperctl-plans';
import { keeperctlRig } from './keeperctl-rig';
import { runsTests } from './keeperctl-runs';
import { servicesAddTests, servicesPublishTests } from './keeperctl-services';
import { soulsAddTests, soulsCovensTests } from './keeperctl-souls';
import { terminalTests } from './keeperctl-terminal';

describe('keeperctl, the operator CLI, against a real keeper', function () {
  this.timeout(300_000);
  const rig = keeperctlRig();
  clustersTests(rig);
  soulsAddTests(rig);
  accessTests(rig);
  servicesAddTests(rig);
  runsTests(rig);
  servicesPublishTests(rig);
  plansTests(rig);
  incarnationsTests(rig);
  soulsCovensTests(rig);
  terminalTests(rig);
});
