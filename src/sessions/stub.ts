/**
 * The Durable Object stub of session `id` (a uuid): one `ChatSession` object per session, named
 * by its uuid through `CHAT_SESSION.idFromName`. Creating a stub does not create the object's
 * storage; an object that holds no session answers `not_found` (or `false`) to every call.
 */
export function sessionStub(env: Env, id: string) {
  return env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(id));
}
