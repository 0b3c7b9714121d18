/*
 * The hosted link page's live part (the page is src/web/link/link-page.tsx). It follows the
 * session over the live WebSocket, `/v1/chatapp/sessions/{id}/live?token=…` (frames in docs/sessions.md,
 * "Live session events"), and shows the view each change calls for without a reload: the current
 * QR code while `pending`, the linked number once `connected` (then `return_url`, if any), a
 * "Try again" button after a timeout or a disconnection. When the socket drops it reconnects
 * with exponential backoff and, until it is back, polls `GET /link/{token}/session`.
 * `<main data-live="open|closed">` tells whether the socket is open (for people and tests alike).
 * Plain JavaScript for current browsers: no build step, nothing fetched from elsewhere.
 */
(() => {
  const main = document.querySelector("main[data-session-id]");
  if (!main) return;

  const token = decodeURIComponent(location.pathname.split("/")[2] || "");
  const sessionId = main.dataset.sessionId;
  const api = `/link/${encodeURIComponent(token)}`;
  const $ = (id) => document.getElementById(id);

  /** Milliseconds after linking before the page follows `return_url`. */
  const RETURN_DELAY_MS = 2000;
  /** Backoff of socket reconnects: 1 s doubling up to 30 s, each drawn from its upper half (jitter). */
  const BACKOFF_MS = { first: 1000, max: 30000 };
  /** How often the page asks for the session while the socket is down. */
  const POLL_MS = 3000;
  /** Keeps an idle socket open through proxies (`ping` is answered without waking the session). */
  const PING_MS = 30000;

  const REASONS = {
    qr_timeout: "The QR code was not scanned in time.",
    disconnected_by_user: "The link to your phone was ended.",
    gateway_unreachable: "The connection to WhatsApp was lost.",
  };
  const GONE = {
    expired: "This link has expired",
    invalid: "This link is not valid",
  };

  let returnUrl = main.dataset.returnUrl || null;
  let ended = false;
  let returning = false;
  let socket = null;
  let attempts = 0;
  let reconnectTimer = null;
  let pollTimer = null;

  function show(view) {
    if (main.dataset.view === view) return;
    for (const section of main.querySelectorAll("section[id^='view-']")) {
      section.hidden = section.id !== `view-${view}`;
    }
    main.dataset.view = view;
    // Screen readers hear the new view's heading; the QR's own refreshes move nothing.
    $(`view-${view}`).querySelector("h1")?.focus();
  }

  function setLiveStatus(text) {
    $("live-status").textContent = text;
  }

  function showQr(dataUri) {
    const img = $("qr");
    if (img.getAttribute("src") !== dataUri) img.src = dataUri;
    img.hidden = false;
    $("qr-note").hidden = false;
    $("qr-wait").hidden = true;
  }

  function followReturnUrl() {
    if (!returnUrl || returning) return;
    returning = true;
    $("return-link").href = returnUrl;
    $("return").hidden = false;
    $("done").hidden = true;
    setTimeout(() => location.assign(returnUrl), RETURN_DELAY_MS);
  }

  /** Shows `session` (the public view: id, status, reason, phone_number) and its QR code. */
  function render(session, qrCode) {
    if (ended) return;
    switch (session.status) {
      case "pending":
        if (qrCode) showQr(qrCode);
        show("pending");
        break;
      case "connected":
        $("linked-number").textContent = session.phone_number || "";
        show("connected");
        followReturnUrl();
        break;
      case "banned":
        show("banned");
        break;
      default:
        $("stopped-reason").textContent =
          REASONS[session.reason] || "Linking stopped before your phone was linked.";
        show("stopped");
    }
  }

  /** The link no longer works (`expired`: expired or revoked; `invalid`: unknown or deleted). */
  function end(why) {
    ended = true;
    clearTimeout(reconnectTimer);
    stopPolling();
    if (socket) socket.close(1000, "done");
    setLiveStatus("");
    $("gone-title").textContent = GONE[why];
    show("gone");
  }

  function onFrame(frame) {
    switch (frame.type) {
      case "session.snapshot":
      case "session.status_changed":
      case "session.qr_updated":
        render(frame.session, frame.qr_code);
        break;
      case "session.pairing_code":
        showPairingCode(frame.pairing_code);
        break;
      case "session.deleted":
        end("invalid");
        break;
    }
  }

  function connect() {
    if (ended) return;
    if (!("WebSocket" in window)) {
      startPolling();
      return;
    }
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(
      `${scheme}//${location.host}/v1/chatapp/sessions/${encodeURIComponent(sessionId)}/live?token=${encodeURIComponent(token)}`,
    );
    socket = ws;
    ws.addEventListener("open", () => {
      main.dataset.live = "open";
      attempts = 0;
      stopPolling();
      setLiveStatus("");
    });
    ws.addEventListener("message", (event) => {
      if (event.data === "pong") return;
      try {
        onFrame(JSON.parse(event.data));
      } catch {
        // Not a frame of ours: ignored.
      }
    });
    ws.addEventListener("close", (event) => {
      if (socket === ws) socket = null;
      main.dataset.live = "closed";
      if (ended) return;
      // 4403: the link was revoked; 4410: it expired; 4404: the session was deleted
      // (src/sessions/live-credentials.ts, live.ts).
      if (event.code === 4403 || event.code === 4410 || event.code === 4404) {
        end(event.code === 4404 ? "invalid" : "expired");
        return;
      }
      setLiveStatus("Connection lost. Reconnecting…");
      startPolling();
      const ceiling = Math.min(BACKOFF_MS.max, BACKOFF_MS.first * 2 ** attempts);
      attempts += 1;
      reconnectTimer = setTimeout(connect, ceiling / 2 + (Math.random() * ceiling) / 2);
    });
  }

  async function poll() {
    try {
      const res = await fetch(`${api}/session`, {
        headers: { Accept: "application/json" },
        cache: "no-store",
      });
      if (res.status === 410 || res.status === 404) {
        end(res.status === 410 ? "expired" : "invalid");
        return;
      }
      if (!res.ok) return;
      const view = await res.json();
      returnUrl = view.return_url || returnUrl;
      render(view.session, view.qr_code);
    } catch {
      // Offline: the next poll or reconnect tries again.
    }
  }

  function startPolling() {
    if (pollTimer === null && !ended) {
      poll();
      pollTimer = setInterval(poll, POLL_MS);
    }
  }

  function stopPolling() {
    clearInterval(pollTimer);
    pollTimer = null;
  }

  /** POSTs `body` to `/link/{token}/<path>`; the parsed answer, or an `error` to show. */
  async function post(path, body) {
    let res;
    try {
      res = await fetch(`${api}/${path}`, {
        method: "POST",
        headers: body ? { "Content-Type": "application/json", Accept: "application/json" } : {},
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch {
      return { error: "No connection. Check your internet connection and try again." };
    }
    const answer = await res.json().catch(() => ({}));
    if (res.ok) return { ok: answer };
    if (res.status === 410 || res.status === 404) {
      end(res.status === 410 ? "expired" : "invalid");
      return { error: null };
    }
    const field = answer.errors ? Object.values(answer.errors)[0] : undefined;
    return { error: field?.[0] || answer.detail || "Something went wrong. Try again." };
  }

  function showError(id, text) {
    $(id).textContent = text || "";
    $(id).hidden = !text;
  }

  function showPairingCode(code) {
    $("pairing-code").textContent = code;
    $("pairing-result").hidden = false;
  }

  $("pairing-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = event.currentTarget.querySelector("button");
    const phone = $("phone").value.trim();
    if (!phone) {
      showError("pairing-error", "Enter your phone number, with its country code.");
      return;
    }
    button.disabled = true;
    showError("pairing-error", "");
    const answer = await post("pairing-code", { phone_number: phone });
    button.disabled = false;
    if (answer.ok) showPairingCode(answer.ok.pairing_code);
    else showError("pairing-error", answer.error);
  });

  $("retry").addEventListener("click", async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    showError("retry-error", "");
    const answer = await post("reconnect");
    button.disabled = false;
    if (answer.ok) render(answer.ok.session, answer.ok.qr_code);
    else if (answer.error) {
      showError("retry-error", answer.error);
      poll();
    }
  });

  // Back online: try the socket now rather than at the end of the backoff.
  window.addEventListener("online", () => {
    if (socket || ended) return;
    clearTimeout(reconnectTimer);
    connect();
  });
  setInterval(() => {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send("ping");
  }, PING_MS);

  if (main.dataset.view === "connected") followReturnUrl();
  connect();
})();
