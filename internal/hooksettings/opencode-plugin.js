// mcpdiff's OpenCode plugin (written by `mcpdiff hooks install --agent opencode`):
// records OpenCode's own file edits in mcpdiff's edit history and refuses a write to
// a file with unsaved changes in Neovim. It runs `mcpdiff hook --agent opencode` with
// the event on stdin, at most 2 seconds (OpenCode puts no time limit on plugins), and
// imports nothing but Node's own child_process.
import { spawnSync } from "node:child_process";

const MCPDIFF = __MCPDIFF_BIN__;
const WRITE_TOOLS = new Set(["edit", "write", "multiedit", "apply_patch", "patch"]);

const prompts = new Map(); // session id -> the user's last prompt: { id, text }
const argsOf = new Map(); // call id -> the arguments its before-hook saw

function hook(event) {
  try {
    const r = spawnSync(MCPDIFF, ["hook", "--agent", "opencode"], {
      input: JSON.stringify(event),
      encoding: "utf8",
      timeout: 2000,
      killSignal: "SIGKILL",
      maxBuffer: 1 << 20,
    });
    const out = (r.stdout || "").trim();
    if (out) {
      const answer = JSON.parse(out);
      if (answer && answer.decision === "deny") return String(answer.reason || "refused by mcpdiff");
    }
  } catch (_) {
    // mcpdiff's own failure never stops a write.
  }
  return null;
}

export const McpDiff = async ({ directory }) => ({
  "chat.message": async (input, output) => {
    try {
      const parts = (output && output.parts) || [];
      const text = parts
        .filter((p) => p && p.type === "text" && !p.synthetic)
        .map((p) => p.text || "")
        .join("\n");
      const id = (output && output.message && output.message.id) || input.messageID || "";
      if (input && input.sessionID) prompts.set(input.sessionID, { id, text });
    } catch (_) {}
  },
  "tool.execute.before": async (input, output) => {
    if (!input || !WRITE_TOOLS.has(input.tool)) return;
    const args = (output && output.args) || {};
    argsOf.set(input.callID, args);
    const reason = hook({
      hook_event_name: "tool.execute.before",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      directory,
      args,
      prompt: prompts.get(input.sessionID) || {},
    });
    if (reason) throw new Error(reason);
  },
  "tool.execute.after": async (input) => {
    if (!input || !WRITE_TOOLS.has(input.tool)) return;
    const args = input.args || argsOf.get(input.callID) || {};
    argsOf.delete(input.callID);
    hook({
      hook_event_name: "tool.execute.after",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      directory,
      args,
      prompt: prompts.get(input.sessionID) || {},
    });
  },
});
