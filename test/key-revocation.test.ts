import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/lib/crypto";
import { accountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, createSession, expectProblem } from "./helpers";
import { linkUrl, openLive, Watcher } from "./live";
import {
  createEndpoint,
  deliveriesOf,
  endpointRow,
  RECEIVER,
  recordingEnv,
  runQueue,
  seedEvent,
  useWebhookReceiver,
} from "./webhook-fixtures";

// What a revoked key leaves behind goes with it (docs/security.md, Keys and scopes): the webhook
// endpoints it created or pointed elsewhere are turned off (`key_revoked`), the link tokens it
// minted are revoked and their live sockets closed (4403), by the admin API's revoke (which
// cascades by default) and by the account's own.

const receiver = useWebhookReceiver();

interface Endpoint {
  id: string;
  url: string;
  enabled: boolean;
  disabled_reason: string | null;
  created_by: string | null;
  url_set_by: string | null;
}

interface Revoked {
  success: boolean;
  data: { revoked: string[]; disabled_webhook_endpoints: string[] };
}

/** POST /v1/api-keys with `by` (asserts 201): the new key's id and secret. */
async function makeKey(by: string, name: string, scopes = ["*"]): Promise<{ id: string; secret: string }> {
  const res = await call<{ data: { key: { id: string }; api_key: string } }>("POST", "/v1/api-keys", {
    key: by,
    body: { name, scopes },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.key.id, secret: res.body.data.api_key };
}

/** POST /admin/accounts/{id}/keys (asserts 201): an admin-made `*` key, as a leaked one would be. */
async function adminKey(accountId: string): Promise<{ id: string; secret: string }> {
  const res = await call<{ data: { key: { id: string }; api_key: string } }>(
    "POST",
    `/admin/accounts/${accountId}/keys`,
    { key: ADMIN_TOKEN, body: { name: "leaked" } },
  );
  expect(res.status).toBe(201);
  return { id: res.body.data.key.id, secret: res.body.data.api_key };
}

async function endpoints(key: string): Promise<Endpoint[]> {
  const res = await call<{ data: Endpoint[] }>("GET", "/v1/webhooks", { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

const linkView = (token: string) => call("GET", `/link/${token}/session`);

describe("webhook endpoints of a revoked key", () => {
  it("records the creating key as created_by and url_set_by", async () => {
    const { key } = await createAccount();
    const hooks = await makeKey(key, "hooks");
    const made = await createEndpoint(hooks.secret, "made", receiver);
    const [shown] = await endpoints(key);
    expect(shown).toMatchObject({ id: made.id, created_by: hooks.id, url_set_by: hooks.id });
  });

  it("the admin revoke of a parent key turns off the endpoints its child created, with the reason, and nothing is delivered to them", async () => {
    const { key, accountId } = await createAccount();
    const leaked = await adminKey(accountId);
    const child = await makeKey(leaked.secret, "child");
    const theirs = await createEndpoint(child.secret, "theirs", receiver);
    const ours = await createEndpoint(key, "ours", receiver);
    // A delivery already waiting for the child's endpoint when the key is revoked.
    const before = await seedEvent(accountId);
    const fanned = recordingEnv();
    await runQueue("chatapp-webhooks", [{ kind: "event", eventId: before, accountId }], fanned.env);
    expect(fanned.sent).toHaveLength(2);

    const res = await call<Revoked>("DELETE", `/admin/keys/${leaked.id}`, { key: ADMIN_TOKEN });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { revoked: [leaked.id, child.id], disabled_webhook_endpoints: [theirs.id] },
    });
    expectProblem(await call("GET", "/v1/webhooks", { key: child.secret }), 401, "unauthenticated");

    // Listed with the reason; the account's own endpoint is untouched.
    const listed = Object.fromEntries((await endpoints(key)).map((e) => [e.id, e]));
    expect(listed[theirs.id]).toMatchObject({
      enabled: false,
      disabled_reason: "key_revoked",
      created_by: child.id,
    });
    expect(listed[ours.id]).toMatchObject({ enabled: true, disabled_reason: null });
    expect(await endpointRow(theirs.id)).toEqual({ enabled: 0, disabled_reason: "key_revoked" });

    // The waiting delivery is not sent, and a new event fans out to the account's endpoint only.
    await runQueue("chatapp-webhooks", fanned.sent);
    const after = await seedEvent(accountId);
    const again = recordingEnv();
    await runQueue("chatapp-webhooks", [{ kind: "event", eventId: after, accountId }], again.env);
    expect(again.sent).toEqual([{ kind: "deliver", eventId: after, endpointId: ours.id, accountId }]);
    await runQueue("chatapp-webhooks", again.sent);
    expect(receiver.to("theirs")).toEqual([]);
    expect(receiver.to("ours")).toHaveLength(2);
    expect((await deliveriesOf(theirs.id)).map((d) => d.event_id)).toEqual([before]);
  });

  it("turns off an endpoint the revoked key pointed elsewhere, though another key created it", async () => {
    const { key } = await createAccount();
    const hooks = await makeKey(key, "hooks");
    const endpoint = await createEndpoint(key, "kept", receiver);
    const untouched = await createEndpoint(key, "untouched", receiver);
    const moved = await call<{ data: Endpoint }>("PATCH", `/v1/webhooks/${endpoint.id}`, {
      key: hooks.secret,
      body: { url: `${RECEIVER}/attacker` },
    });
    expect(moved.body.data.url_set_by).toBe(hooks.id);

    // The account's own route, without cascade, takes the key's endpoints as well.
    expect((await call("DELETE", `/v1/api-keys/${hooks.id}`, { key })).status).toBe(204);
    const listed = Object.fromEntries((await endpoints(key)).map((e) => [e.id, e]));
    expect(listed[endpoint.id]).toMatchObject({
      enabled: false,
      disabled_reason: "key_revoked",
      url_set_by: hooks.id,
    });
    expect(listed[untouched.id]).toMatchObject({ enabled: true, disabled_reason: null });

    // A live key may look, point it back and turn it on again.
    const back = await call<{ data: Endpoint }>("PATCH", `/v1/webhooks/${endpoint.id}`, {
      key,
      body: { url: `${RECEIVER}/kept`, enabled: true },
    });
    expect(back.body.data).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it("the account's cascade lists the endpoints it turned off; one turned off by delivery keeps its reason; rows without a creator stay", async () => {
    const { key, accountId } = await createAccount();
    const d1 = await accountD1(accountId);
    const parent = await makeKey(key, "parent");
    const child = await makeKey(parent.secret, "child");
    const [a, gone, old] = [
      await createEndpoint(child.secret, "a", receiver),
      await createEndpoint(child.secret, "gone", receiver),
      await createEndpoint(parent.secret, "old", receiver),
    ];
    await d1
      .prepare("UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'gone' WHERE id = ?")
      .bind(gone.id)
      .run();
    // As an endpoint made before the columns existed.
    await d1
      .prepare("UPDATE webhook_endpoints SET created_by = NULL, url_set_by = NULL WHERE id = ?")
      .bind(old.id)
      .run();

    const res = await call<Revoked>("DELETE", `/v1/api-keys/${parent.id}?cascade=true`, { key });
    expect(res.body.data).toEqual({ revoked: [parent.id, child.id], disabled_webhook_endpoints: [a.id] });
    expect(await endpointRow(a.id)).toEqual({ enabled: 0, disabled_reason: "key_revoked" });
    expect(await endpointRow(gone.id)).toEqual({ enabled: 0, disabled_reason: "gone" });
    expect(await endpointRow(old.id)).toEqual({ enabled: 1, disabled_reason: null });
  });
});

describe("link tokens of a revoked key", () => {
  it("records the minting key as created_by", async () => {
    const { key, accountId } = await createAccount();
    const { session } = await createSession(key);
    const minter = await makeKey(key, "minter");
    await linkUrl(minter.secret, session.id);
    const row = await (await accountD1(accountId))
      .prepare("SELECT created_by FROM link_tokens WHERE session_id = ?")
      .bind(session.id)
      .first<{ created_by: string | null }>();
    expect(row?.created_by).toBe(minter.id);
  });

  it("the admin revoke of a parent key revokes the tokens its child minted (410) and closes their sockets with 4403", async () => {
    const { key, accountId } = await createAccount();
    const { session } = await createSession(key);
    const leaked = await adminKey(accountId);
    const child = await makeKey(leaked.secret, "child");
    const theirs = await linkUrl(child.secret, session.id);
    const ours = await linkUrl(key, session.id);
    const [byTheirs, byOurs] = [
      await Watcher.open(session.id, { token: theirs.token }),
      await Watcher.open(session.id, { token: ours.token }),
    ];
    await byTheirs.next();
    await byOurs.next();

    expect((await call("DELETE", `/admin/keys/${leaked.id}`, { key: ADMIN_TOKEN })).status).toBe(200);
    expect(await byTheirs.close()).toEqual({ code: 4403, reason: "link revoked" });
    const dead = expectProblem(await linkView(theirs.token), 410, "link_expired");
    expect(dead.detail).toMatch(/revoked/);
    expectProblem(await call("POST", `/link/${theirs.token}/reconnect`), 410, "link_expired");
    // The token another key minted lives on, and so does its socket.
    expect((await linkView(ours.token)).status).toBe(200);
    expect(byOurs.closed).toBeNull();
    // Nor does it open a new socket.
    expect((await openLive(session.id, { token: theirs.token })).status).toBe(410);
  });

  it("the account's own revoke, without cascade, revokes the key's tokens; tokens without a creator stay", async () => {
    const { key, accountId } = await createAccount();
    const { session } = await createSession(key);
    const minter = await makeKey(key, "minter");
    const [minted, old] = [
      await linkUrl(minter.secret, session.id),
      await linkUrl(minter.secret, session.id),
    ];
    // As a token minted before tokens recorded their key.
    await (await accountD1(accountId))
      .prepare("UPDATE link_tokens SET created_by = NULL WHERE token_hash = ?")
      .bind(await sha256Hex(old.token))
      .run();

    expect((await call("DELETE", `/v1/api-keys/${minter.id}`, { key })).status).toBe(204);
    expectProblem(await linkView(minted.token), 410, "link_expired");
    expect((await linkView(old.token)).status).toBe(200);
  });
});
