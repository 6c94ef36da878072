// TypeScript shapes of the wire messages as proto/load.ts decodes them (snake_case, oneof name in
// `msg`). Hand-written beside the .proto files and checked against them by proto/types.test.ts.
// Wire types are not domain types: hub/ and agent/ convert at their edges.

export interface Soulprint {
  fqdn: string;
  hostname: string;
  os_family: string;
  os_name: string;
  os_release: string;
  architecture: string;
  cpu_count: number;
  memory_bytes: number;
  addresses: string[];
  soul_version: string;
}

export interface EnrollRequest { token: string; sid: string; csr_pem: string }
export interface EnrollResponse { sid: string; certificate_pem: string; chain_pem: string[]; serial: string; not_after_ms: number }

export interface Hello { soulprint: Soulprint | null; soul_version: string }
export interface Heartbeat { seq: number }
export interface Facts { soulprint: Soulprint | null }
export interface StepProgress { request_id: string; message: string }
export interface StepResultMsg {
  request_id: string; apply_id: string; step_index: number; changed: boolean; ok: boolean; output: string;
  started_at_ms: number; finished_at_ms: number; replayed: boolean;
  /** JSON object or '' (check mode: what would change). */
  diff_json?: string;
}

export interface RenewCertificate { csr_pem: string }

export type SoulMessage =
  | { msg: 'hello'; hello: Hello }
  | { msg: 'heartbeat'; heartbeat: Heartbeat }
  | { msg: 'facts'; facts: Facts }
  | { msg: 'step_progress'; step_progress: StepProgress }
  | { msg: 'step_result'; step_result: StepResultMsg }
  | { msg: 'renew_certificate'; renew_certificate: RenewCertificate };

export interface Welcome { session_id: string; epoch: number; heartbeat_interval_ms: number; kid: string }
export interface StepRequestMsg {
  request_id: string; apply_id: string; step_index: number; module: string; params_json: string; dry_run: boolean; show_content?: boolean;
  /** A module shipped with the service: its program (absent or null for core.* modules). */
  program?: ModuleProgramMsg | null;
}
export interface ModuleProgramMsg { sha256: string; content_base64: string; dry_run: boolean; timeout_ms: number }
export interface Cancel { request_id: string; reason: string }
export interface Goodbye { reason: GoodbyeReason }
export interface CertificateRenewed { certificate_pem: string; chain_pem: string[]; serial: string; not_after_ms: number }
export interface RenewalRefused { reason: string; retryable: boolean }

export type GoodbyeReason = 'superseded' | 'shutdown' | 'silent' | 'fenced' | 'revoked' | 'rotated';

export type KeeperMessage =
  | { welcome: Welcome }
  | { step_request: StepRequestMsg }
  | { cancel: Cancel }
  | { goodbye: Goodbye }
  | { certificate_renewed: CertificateRenewed }
  | { renewal_refused: RenewalRefused };

/** A decoded KeeperMessage as the soul receives it (the oneof name in `msg`). */
export type ReceivedKeeperMessage =
  | { msg: 'welcome'; welcome: Welcome }
  | { msg: 'step_request'; step_request: StepRequestMsg }
  | { msg: 'cancel'; cancel: Cancel }
  | { msg: 'goodbye'; goodbye: Goodbye }
  | { msg: 'certificate_renewed'; certificate_renewed: CertificateRenewed }
  | { msg: 'renewal_refused'; renewal_refused: RenewalRefused };

/** The same for the keeper side: what SoulMessage a client may write (no `msg` needed on send). */
export type OutgoingSoulMessage =
  | { hello: Hello } | { heartbeat: Heartbeat } | { facts: Facts } | { step_progress: StepProgress } | { step_result: StepResultMsg }
  | { renew_certificate: RenewCertificate };
