//! `tools/call`: who may call, where the call is recorded, and the loop's own handling.

use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use shared::{
    message::Message,
    tools::{validate_arguments, Access, Assistant, ToolName, ValidationContext},
};

use super::{
    auth::{self, Identity, McpLimiter},
    registry::DECIDE_APPROVAL,
    results::{self, Approval},
};
use crate::{
    agent::{Decision, DirectCall, EditRejected, Home},
    store::{self, StoreError},
    AppState,
};

/// One `tools/call` on one assistant's endpoint.
pub struct Caller<'a> {
    pub state: &'a AppState,
    pub assistant: Assistant,
    pub headers: &'a HeaderMap,
    pub identity: &'a Identity,
    pub limiter: &'a McpLimiter,
}

const STORAGE_FAILED: &str =
    "Something went wrong on our side; nothing was changed. Please try again.";

impl Caller<'_> {
    /// Answers the call; every failure is a tool result the model can read, never a
    /// protocol error.
    pub async fn call(&self, request: CallToolRequestParams) -> CallToolResult {
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        let outcome = if name == DECIDE_APPROVAL && self.has_approvals() {
            self.decide(arguments).await
        } else {
            self.run(&name, arguments).await
        };
        outcome.unwrap_or_else(|error| {
            tracing::error!(%error, tool = %name, "an MCP call failed on our storage");
            results::failure(
                &name,
                None,
                "STORAGE_UNAVAILABLE",
                STORAGE_FAILED,
                true,
                None,
            )
        })
    }

    fn has_approvals(&self) -> bool {
        self.assistant
            .tools()
            .into_iter()
            .any(|tool| tool.definition().requires_approval)
    }

    /// The owner a personal tool runs for, or the result that asks the caller to sign in
    /// (with the scope it lacks) or to slow down.
    fn owner_for(&self, tool: &str, scope: &str) -> Result<&str, CallToolResult> {
        let (owner_id, missing_scope) = match self.identity {
            Identity::Anonymous => return Err(self.sign_in(tool, None)),
            Identity::Owner { owner_id, scopes } => {
                (owner_id.as_str(), !scopes.iter().any(|s| s == scope))
            }
        };
        if missing_scope {
            return Err(self.sign_in(tool, Some(scope)));
        }
        if let Err(seconds) = self.limiter.check(owner_id) {
            return Err(results::failure(
                tool,
                None,
                "RATE_LIMITED",
                &format!("Too many calls; wait {seconds} s and try again."),
                true,
                None,
            ));
        }
        Ok(owner_id)
    }

    /// The result that makes an MCP host start (or widen) the person's sign-in: the
    /// `mcp/www_authenticate` challenge of SEP-1489, as ChatGPT reads it.
    fn sign_in(&self, tool: &str, scope: Option<&str>) -> CallToolResult {
        let error = scope.map(|_| "insufficient_scope");
        let mut meta = JsonObject::new();
        if let Some(challenge) =
            auth::challenge(self.state, self.headers, self.assistant, error, scope)
        {
            meta.insert("mcp/www_authenticate".into(), json!([challenge]));
        }
        let message = match scope {
            None => format!(
                "{tool} works on the person's own datban account: they must sign in (connect \
                 datban) first. Nothing was done."
            ),
            Some(scope) => format!(
                "{tool} needs the \"{scope}\" permission, which the person has not granted \
                 this app. Nothing was done."
            ),
        };
        results::failure(tool, None, "SIGN_IN_REQUIRED", &message, false, Some(meta))
    }

    async fn run(&self, name: &str, arguments: JsonObject) -> Result<CallToolResult, StoreError> {
        let raw = Value::Object(arguments).to_string();
        let agent = &self.state.agent;
        // Unknown names and other assistants' tools are answered by the loop's own
        // allow-list below, with the same message a model gets.
        let tool = ToolName::parse(name).filter(|tool| self.assistant.allows(*tool));
        let personal = tool.and_then(|tool| match tool.definition().access {
            Access::Public => None,
            Access::Personal(scope) => Some(scope),
        });
        let Some(scope) = personal else {
            let message = Message::assistant(store::new_id("msg"));
            let call = DirectCall {
                id: store::new_id("call"),
                name: name.to_owned(),
                arguments: raw,
            };
            let id = call.id.clone();
            let message = agent
                .call_directly(self.assistant, Home::Nowhere, message, call)
                .await;
            return Ok(self.answer(&message, &id));
        };
        let owner_id = match self.owner_for(name, scope) {
            Ok(owner) => owner,
            Err(result) => return Ok(result),
        };
        let conversation_id = self.conversation(owner_id).await?;
        if let Some(tool) = tool.filter(|tool| tool.definition().requires_approval) {
            // Hosts call a tool again with the same arguments (a retry, a second thought):
            // the call already waiting is the answer, not a second form.
            let now = (agent.clock)();
            if let Ok(input) = validate_arguments(tool, &raw, &ValidationContext { now }) {
                let canonical = input.to_json().to_string();
                if let Some(waiting) =
                    store::find_waiting(&agent.db, &conversation_id, tool.as_str(), &canonical)
                        .await?
                {
                    if let Some(message) =
                        store::message(&agent.db, &conversation_id, &waiting.message_id).await?
                    {
                        return Ok(self.answer(&message, &waiting.tool_call_id));
                    }
                }
            }
        }
        // One message per call, its id matching the call's, so a decision finds it.
        let key = uuid::Uuid::new_v4().simple().to_string();
        let message = Message::assistant(format!("msg_{key}"));
        store::append_message(&agent.db, &conversation_id, &message, (agent.clock)()).await?;
        let call = DirectCall {
            id: format!("call_{key}"),
            name: name.to_owned(),
            arguments: raw,
        };
        let id = call.id.clone();
        let home = Home::Stored {
            owner_id,
            conversation_id: &conversation_id,
        };
        let message = agent
            .call_directly(self.assistant, home, message, call)
            .await;
        Ok(self.answer(&message, &id))
    }

    /// The result for call `id` of `message`, with its approval when it waits for one.
    fn answer(&self, message: &Message, id: &str) -> CallToolResult {
        let Some(part) = message.tool_part(id) else {
            tracing::error!(call = %id, "a direct call left no part");
            return results::failure(
                "unknown",
                Some(id),
                "EXECUTION_FAILED",
                "The tool failed on our side. Tell the user it did not work this time.",
                false,
                None,
            );
        };
        let approval = (part.state_name() == "approval-requested").then(|| Approval {
            id: id.to_owned(),
            token: self.approval_token(id),
            url: self.approval_url(),
        });
        results::from_part(part, approval.as_ref())
    }

    /// The conversation that holds this owner's calls to this assistant from MCP hosts,
    /// created on first use.
    async fn conversation(&self, owner_id: &str) -> Result<String, StoreError> {
        let id = conversation_id(owner_id, self.assistant);
        let agent = &self.state.agent;
        store::ensure_conversation(&agent.db, &id, owner_id, self.assistant, (agent.clock)())
            .await?;
        Ok(id)
    }

    /// Proves a decision comes from whoever received the call's result `_meta` (the
    /// widget), not from the model, which sees only `structuredContent`.
    fn approval_token(&self, call_id: &str) -> String {
        self.approval_mac(call_id)
            .map(|mac| crate::owner::to_hex(&mac.finalize().into_bytes()))
            .unwrap_or_default()
    }

    fn token_matches(&self, call_id: &str, token: &str) -> bool {
        let bytes = (token.len() <= 128)
            .then(|| crate::owner::from_hex(token))
            .flatten();
        match (self.approval_mac(call_id), bytes) {
            // Constant time: the comparison itself tells nothing about the right token.
            (Some(mac), Some(bytes)) => mac.verify_slice(&bytes).is_ok(),
            _ => false,
        }
    }

    /// The server's secret keyed over the call id (`None` never happens: HMAC takes keys
    /// of any length).
    fn approval_mac(&self, call_id: &str) -> Option<Hmac<Sha256>> {
        let mut mac = Hmac::<Sha256>::new_from_slice(self.state.cookie_key.signing()).ok()?;
        mac.update(b"mcp-approval\n");
        mac.update(call_id.as_bytes());
        Some(mac)
    }

    /// datban's page showing the conversation with the form, for hosts without widgets.
    fn approval_url(&self) -> Option<String> {
        let Identity::Owner { owner_id, .. } = self.identity else {
            return None;
        };
        let base = crate::oauth::resource_url(self.state, self.headers, "")?;
        Some(format!(
            "{base}/?c={}",
            conversation_id(owner_id, self.assistant)
        ))
    }

    async fn decide(&self, arguments: JsonObject) -> Result<CallToolResult, StoreError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Args {
            approval_id: String,
            approval_token: String,
            approved: bool,
            #[serde(default)]
            input: Option<JsonObject>,
        }
        let args: Args = match serde_json::from_value(Value::Object(arguments)) {
            Ok(args) => args,
            Err(error) => {
                return Ok(results::failure(
                    DECIDE_APPROVAL,
                    None,
                    "VALIDATION_ERROR",
                    &format!("Invalid arguments for {DECIDE_APPROVAL}: {error}. Nothing was done."),
                    false,
                    None,
                ))
            }
        };
        let Identity::Owner { owner_id, scopes } = self.identity else {
            return Ok(self.sign_in(DECIDE_APPROVAL, None));
        };
        let not_found = || {
            results::failure(
                DECIDE_APPROVAL,
                None,
                "NOT_FOUND",
                "No confirmation with this id is waiting for this person. Nothing was done.",
                false,
                None,
            )
        };
        if !self.token_matches(&args.approval_id, &args.approval_token) {
            return Ok(not_found());
        }
        // Decisions are not paced: each pending call can be carried out once, and a
        // double click or a retry must get its outcome, not "slow down".
        let conversation_id = self.conversation(owner_id).await?;
        let agent = &self.state.agent;
        let replay = || async {
            // Decided already (here, on the page, or by a concurrent click): the stored
            // outcome, and nothing runs again.
            let message_id = args.approval_id.replacen("call_", "msg_", 1);
            Ok::<_, StoreError>(
                match store::message(&agent.db, &conversation_id, &message_id).await? {
                    Some(message) => match message.tool_part(&args.approval_id) {
                        // Another decision holds the call and is carrying it out now.
                        Some(part) if part.state_name() == "approval-requested" => {
                            results::failure(
                                part.tool_name(),
                                Some(&args.approval_id),
                                "DECISION_IN_PROGRESS",
                                "This confirmation is being carried out right now; ask again \
                                 in a moment for its outcome. Nothing was done twice.",
                                true,
                                None,
                            )
                        }
                        Some(_) => self.answer(&message, &args.approval_id),
                        None => not_found(),
                    },
                    None => not_found(),
                },
            )
        };
        let Some(peeked) =
            store::peek_pending(&agent.db, &conversation_id, &args.approval_id, owner_id).await?
        else {
            return replay().await;
        };
        let Some(tool) = ToolName::parse(&peeked.tool_name) else {
            return Ok(not_found());
        };
        if let Access::Personal(scope) = tool.definition().access {
            if !scopes.iter().any(|s| s == scope) {
                return Ok(self.sign_in(tool.as_str(), Some(scope)));
            }
        }
        let edited = match (args.input, args.approved) {
            (Some(input), true) => {
                match crate::agent::check_edit(
                    agent,
                    tool,
                    &Value::Object(input),
                    owner_id,
                    &conversation_id,
                    &args.approval_id,
                )
                .await
                {
                    Ok(input) => Some(input),
                    Err(EditRejected::Invalid(error)) => {
                        // The call stays pending: the person can fix the form and confirm.
                        return Ok(results::failure(
                            tool.as_str(),
                            Some(&args.approval_id),
                            "VALIDATION_ERROR",
                            &error.message,
                            false,
                            None,
                        ));
                    }
                    Err(EditRejected::Internal) => {
                        return Ok(results::failure(
                            tool.as_str(),
                            Some(&args.approval_id),
                            "EXECUTION_FAILED",
                            "Something went wrong on our side. Please try again.",
                            true,
                            None,
                        ))
                    }
                }
            }
            _ => None,
        };
        // As on the page: an unedited approval is taken only on the facts it was shown.
        if args.approved && edited.is_none() {
            if let Err(changed) = crate::agent::recheck_preview(agent, tool, &peeked).await {
                let mut answer = results::failure(
                    tool.as_str(),
                    Some(&args.approval_id),
                    "PREVIEW_CHANGED",
                    "What this confirmation would do changed since it was shown (for example \
                     the time slot filled up); nothing was done. Show the person the new \
                     preview and ask again.",
                    false,
                    None,
                );
                if let Some(Value::Object(content)) = answer.structured_content.as_mut() {
                    content.insert("preview".into(), changed.part["preview"].clone());
                }
                return Ok(answer);
            }
        }
        // The atomic take: of simultaneous decisions exactly one gets the call.
        let Some(taken) = store::take_pending(
            &agent.db,
            &conversation_id,
            &args.approval_id,
            owner_id,
            (agent.clock)(),
            None,
        )
        .await?
        else {
            return replay().await;
        };
        let decision = Decision {
            approved: args.approved,
            edited,
            reason: None,
        };
        let (message, carried_out) = agent.decide_directly(taken, decision).await?;
        if !carried_out {
            return Ok(results::failure(
                tool.as_str(),
                Some(&args.approval_id),
                "STORAGE_UNAVAILABLE",
                "The server could not carry this out; nothing was done. The confirmation is \
                 still open: try again.",
                true,
                None,
            ));
        }
        Ok(self.answer(&message, &args.approval_id))
    }
}

/// One conversation per owner and assistant holds the owner's calls from MCP hosts; its
/// id is derived from both, so no lookup table is needed.
fn conversation_id(owner_id: &str, assistant: Assistant) -> String {
    let digest = Sha256::digest(format!("mcp\n{owner_id}\n{}", assistant.as_str()));
    format!("conv_mcp{}", crate::owner::to_hex(&digest[..16]))
}
