import { describe, expect, it } from "vitest";
import {
  conflictOf,
  initial,
  next,
  type SessionChange,
  type SessionInput,
  type SessionState,
  type Transition,
} from "../src/sessions/transitions";

// The session's status machine as a table: every state × every input, with the expected
// transition. The table's type requires every pair, so a new state or input cannot be left out.

const PHONE = "+15550100001";
const OTHER_PHONE = "+15550100002";

const states = {
  pending: { status: "pending", reason: null, phone_number: null, qr: "qr-1" },
  connected: { status: "connected", reason: null, phone_number: PHONE, qr: null },
  disconnectedByUser: {
    status: "disconnected",
    reason: "disconnected_by_user",
    phone_number: PHONE,
    qr: null,
  },
  disconnectedByGateway: {
    status: "disconnected",
    reason: "connection_closed",
    phone_number: PHONE,
    qr: null,
  },
  disconnectedUnreachable: {
    status: "disconnected",
    reason: "gateway_unreachable",
    phone_number: PHONE,
    qr: null,
  },
  failed: { status: "failed", reason: "qr_timeout", phone_number: null, qr: null },
  banned: { status: "banned", reason: "account_banned", phone_number: PHONE, qr: null },
} satisfies Record<string, SessionState>;

const inputs = {
  disconnect: { type: "disconnect" },
  reconnectLinked: {
    type: "reconnect",
    link: { status: "connected", phoneNumber: PHONE, displayName: "Alice" },
  },
  reconnectQr: { type: "reconnect", link: { status: "pending", qr: "qr-2" } },
  scan: { type: "scan", phoneNumber: OTHER_PHONE, displayName: "Sandbox" },
  drop: { type: "drop", reason: "connection_lost", loggedOut: false },
  ban: { type: "ban", reason: "account_banned" },
  qrTimeout: { type: "qr_timeout" },
  gatewayUnreachable: { type: "gateway_unreachable" },
  linkedSamePhone: { type: "linked", phoneNumber: PHONE, displayName: "Alice" },
  linkedOtherPhone: { type: "linked", phoneNumber: OTHER_PHONE, displayName: null },
  qrSame: { type: "qr", qr: "qr-1" },
  qrNew: { type: "qr", qr: "qr-2" },
  qrWithoutPayload: { type: "qr", qr: null },
  dropped: { type: "dropped", reason: "gateway_stopped", loggedOut: false },
  droppedLoggedOut: { type: "dropped", reason: "logged_out", loggedOut: true },
  failedEvent: { type: "failed", reason: "gateway_failed" },
  bannedEvent: { type: "banned", reason: "account_banned" },
} satisfies Record<string, SessionInput>;

const unchanged: Transition = { type: "unchanged" };
const conflict = (code: Extract<Transition, { type: "conflict" }>["code"]): Transition => ({
  type: "conflict",
  code,
});
const to = (change: SessionChange): Transition => ({ type: "move", to: change });
const connected = (phoneNumber: string, displayName: string | null) =>
  to({ status: "connected", reason: null, phoneNumber, displayName });
const pending = (qr: string) => to({ status: "pending", reason: null, qr });
const disconnected = (reason: string) => to({ status: "disconnected", reason, failPending: false });
const failed = (reason: string) => to({ status: "failed", reason, failPending: false });
const banned = to({ status: "banned", reason: "account_banned", failPending: true });
const needsQr: Transition = { type: "needs_qr" };

// Rows: the state the session is in. Columns: what happens.
const table: Record<keyof typeof states, Record<keyof typeof inputs, Transition>> = {
  pending: {
    disconnect: conflict("session_not_connected"),
    reconnectLinked: conflict("session_not_disconnected"),
    reconnectQr: conflict("session_not_disconnected"),
    scan: connected(OTHER_PHONE, "Sandbox"),
    drop: conflict("session_not_connected"),
    ban: conflict("session_not_linked"),
    qrTimeout: failed("qr_timeout"),
    gatewayUnreachable: unchanged,
    linkedSamePhone: connected(PHONE, "Alice"),
    linkedOtherPhone: connected(OTHER_PHONE, null),
    qrSame: unchanged,
    qrNew: { type: "replace_qr", qr: "qr-2" },
    qrWithoutPayload: needsQr,
    dropped: disconnected("gateway_stopped"),
    droppedLoggedOut: disconnected("logged_out"),
    failedEvent: failed("gateway_failed"),
    bannedEvent: banned,
  },
  connected: {
    disconnect: disconnected("disconnected_by_user"),
    reconnectLinked: conflict("session_not_disconnected"),
    reconnectQr: conflict("session_not_disconnected"),
    scan: conflict("session_not_pending"),
    drop: disconnected("connection_lost"),
    ban: banned,
    qrTimeout: unchanged,
    gatewayUnreachable: disconnected("gateway_unreachable"),
    linkedSamePhone: unchanged,
    linkedOtherPhone: connected(OTHER_PHONE, null),
    qrSame: pending("qr-1"),
    qrNew: pending("qr-2"),
    qrWithoutPayload: needsQr,
    dropped: disconnected("gateway_stopped"),
    droppedLoggedOut: disconnected("logged_out"),
    failedEvent: failed("gateway_failed"),
    bannedEvent: banned,
  },
  disconnectedByUser: {
    disconnect: conflict("session_not_connected"),
    reconnectLinked: connected(PHONE, "Alice"),
    reconnectQr: pending("qr-2"),
    scan: conflict("session_not_pending"),
    drop: conflict("session_not_connected"),
    ban: banned,
    qrTimeout: unchanged,
    gatewayUnreachable: unchanged,
    linkedSamePhone: connected(PHONE, "Alice"),
    linkedOtherPhone: connected(OTHER_PHONE, null),
    qrSame: pending("qr-1"),
    qrNew: pending("qr-2"),
    qrWithoutPayload: needsQr,
    dropped: unchanged,
    droppedLoggedOut: unchanged,
    failedEvent: failed("gateway_failed"),
    bannedEvent: banned,
  },
  disconnectedByGateway: {
    disconnect: conflict("session_not_connected"),
    reconnectLinked: connected(PHONE, "Alice"),
    reconnectQr: pending("qr-2"),
    scan: conflict("session_not_pending"),
    drop: conflict("session_not_connected"),
    ban: banned,
    qrTimeout: unchanged,
    gatewayUnreachable: unchanged,
    linkedSamePhone: connected(PHONE, "Alice"),
    linkedOtherPhone: connected(OTHER_PHONE, null),
    qrSame: pending("qr-1"),
    qrNew: pending("qr-2"),
    qrWithoutPayload: needsQr,
    dropped: unchanged,
    droppedLoggedOut: unchanged,
    failedEvent: failed("gateway_failed"),
    bannedEvent: banned,
  },
  disconnectedUnreachable: {
    disconnect: conflict("session_not_connected"),
    reconnectLinked: connected(PHONE, "Alice"),
    reconnectQr: pending("qr-2"),
    scan: conflict("session_not_pending"),
    drop: conflict("session_not_connected"),
    ban: banned,
    qrTimeout: unchanged,
    gatewayUnreachable: unchanged,
    linkedSamePhone: connected(PHONE, "Alice"),
    linkedOtherPhone: connected(OTHER_PHONE, null),
    qrSame: pending("qr-1"),
    qrNew: pending("qr-2"),
    qrWithoutPayload: needsQr,
    dropped: disconnected("gateway_stopped"),
    droppedLoggedOut: disconnected("logged_out"),
    failedEvent: failed("gateway_failed"),
    bannedEvent: banned,
  },
  failed: {
    disconnect: conflict("session_not_connected"),
    reconnectLinked: connected(PHONE, "Alice"),
    reconnectQr: pending("qr-2"),
    scan: conflict("session_not_pending"),
    drop: conflict("session_not_connected"),
    ban: conflict("session_not_linked"),
    qrTimeout: unchanged,
    gatewayUnreachable: unchanged,
    linkedSamePhone: connected(PHONE, "Alice"),
    linkedOtherPhone: connected(OTHER_PHONE, null),
    qrSame: pending("qr-1"),
    qrNew: pending("qr-2"),
    qrWithoutPayload: needsQr,
    dropped: unchanged,
    droppedLoggedOut: unchanged,
    failedEvent: unchanged,
    bannedEvent: banned,
  },
  banned: {
    disconnect: conflict("session_not_connected"),
    reconnectLinked: conflict("session_not_disconnected"),
    reconnectQr: conflict("session_not_disconnected"),
    scan: conflict("session_not_pending"),
    drop: conflict("session_not_connected"),
    ban: conflict("session_not_linked"),
    qrTimeout: unchanged,
    gatewayUnreachable: unchanged,
    linkedSamePhone: unchanged,
    linkedOtherPhone: unchanged,
    qrSame: unchanged,
    qrNew: unchanged,
    qrWithoutPayload: unchanged,
    dropped: unchanged,
    droppedLoggedOut: unchanged,
    failedEvent: unchanged,
    bannedEvent: unchanged,
  },
};

const cases = Object.entries(states).flatMap(([stateName, state]) =>
  Object.entries(inputs).map(([inputName, input]) => ({
    stateName,
    inputName,
    state: state as SessionState,
    input: input as SessionInput,
    expected: table[stateName as keyof typeof states][inputName as keyof typeof inputs],
  })),
);

describe("next(state, input)", () => {
  it("has a row for every state and a column for every input", () => {
    expect(cases).toHaveLength(Object.keys(states).length * Object.keys(inputs).length);
    expect(Object.keys(table).sort()).toEqual(Object.keys(states).sort());
    for (const row of Object.values(table))
      expect(Object.keys(row).sort()).toEqual(Object.keys(inputs).sort());
  });

  it.each(cases)("$stateName + $inputName", ({ state, input, expected }) => {
    expect(next(state, input)).toEqual(expected);
  });

  it("ignores the gateway's clock: an event with `at` moves as one without", () => {
    const event = { type: "failed", reason: "gateway_failed", at: 1_700_000_000_000 } as const;
    expect(next(states.connected as SessionState, event)).toEqual(failed("gateway_failed"));
  });

  it("does not change the state it reads", () => {
    const state: SessionState = { ...states.pending };
    next(state, inputs.scan as SessionInput);
    expect(state).toEqual(states.pending);
  });
});

describe("initial(link)", () => {
  it("starts pending with the gateway's first QR", () => {
    expect(initial({ status: "pending", qr: "qr-1" })).toEqual({
      status: "pending",
      reason: null,
      qr: "qr-1",
    });
  });

  it("starts connected when the gateway already holds a link", () => {
    expect(initial({ status: "connected", phoneNumber: PHONE, displayName: null })).toEqual({
      status: "connected",
      reason: null,
      phoneNumber: PHONE,
      displayName: null,
    });
  });
});

describe("conflictOf(command, status)", () => {
  it("answers the same conflict as next, before a gateway call", () => {
    expect(conflictOf("disconnect", "pending")).toBe("session_not_connected");
    expect(conflictOf("disconnect", "connected")).toBeNull();
    expect(conflictOf("reconnect", "failed")).toBeNull();
    expect(conflictOf("reconnect", "banned")).toBe("session_not_disconnected");
    expect(conflictOf("scan", "connected")).toBe("session_not_pending");
    expect(conflictOf("ban", "pending")).toBe("session_not_linked");
    expect(conflictOf("drop", "disconnected")).toBe("session_not_connected");
  });
});
