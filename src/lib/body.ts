/**
 * The first `limit` bytes of a response's body, decoded as UTF-8; the rest is cancelled unread. A
 * body that breaks off gives what arrived before; no body gives "".
 */
export async function readTextPrefix(response: Response, limit: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let read = 0;
  try {
    while (read < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      const keep = Math.min(value.byteLength, limit - read);
      read += keep;
      text += decoder.decode(value.subarray(0, keep), { stream: true });
    }
    await reader.cancel();
  } catch {
    // What arrived before the body broke off is what there is.
  }
  return text + decoder.decode();
}
