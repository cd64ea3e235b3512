//! Typed calls for every client→server method.

use ferromcp_types::Era;
use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::methods::{self, Request};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult, Cursor,
    DiscoverResult, GetPromptRequestParams, GetPromptResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    MaybeInputRequired, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult,
    RequestParams, ResourceUriParams, SetLevelRequestParams,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::{Client, lock};
use crate::error::ClientError;
use crate::options::RequestOptions;

pub(crate) fn to_object<T: Serialize>(method: &str, params: &T) -> Result<JsonObject, ClientError> {
    match serde_json::to_value(params) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::Null) => Ok(JsonObject::new()),
        Ok(other) => Err(ClientError::Encode {
            method: method.to_owned(),
            detail: format!("expected an object, got {other}"),
        }),
        Err(e) => Err(ClientError::Encode {
            method: method.to_owned(),
            detail: e.to_string(),
        }),
    }
}

fn paginated(cursor: Option<Cursor>) -> PaginatedRequestParams {
    match cursor {
        Some(c) => PaginatedRequestParams::new().with_cursor(c),
        None => PaginatedRequestParams::new(),
    }
}

impl Client {
    /// Sends any typed request `R` and decodes its result. In the modern era, an
    /// `input_required` answer (for `tools/call`, `prompts/get`, `resources/read`) is driven to
    /// completion with the client's handlers, and a `tools/call` answered with a task handle
    /// (the 2026-07-28 tasks extension, see [`crate::tasks`]) is waited for.
    pub async fn request<R: Request>(
        &self,
        params: R::Params,
        opts: RequestOptions,
    ) -> Result<R::Result, ClientError> {
        let params = to_object(R::METHOD, &params)?;
        let value = self.inner.execute(R::METHOD, params, &opts, true).await?;
        let value = crate::tasks::settle(&self.inner, R::METHOD, value).await?;
        serde_json::from_value(value).map_err(|e| ClientError::decode(R::METHOD, e))
    }

    /// Sends a typed request once and returns its result or the server's
    /// [`InputRequiredResult`](ferromcp_types::mcp::InputRequiredResult) as it came, for
    /// callers that drive the rounds themselves. A task handle is waited for, as with
    /// [`Client::request`]; [`Client::request_once_or_task`] hands it back instead.
    pub async fn request_once<R: Request>(
        &self,
        params: R::Params,
        opts: RequestOptions,
    ) -> Result<MaybeInputRequired<R::Result>, ClientError> {
        let params = to_object(R::METHOD, &params)?;
        let value = self.inner.execute(R::METHOD, params, &opts, false).await?;
        let value = crate::tasks::settle(&self.inner, R::METHOD, value).await?;
        serde_json::from_value(value).map_err(|e| ClientError::decode(R::METHOD, e))
    }

    /// Sends any request by name with raw params (an object, or null for none) and returns
    /// the raw result. The envelope, cache and multi-round driver apply as for typed calls.
    pub async fn send_request(
        &self,
        method: &str,
        params: Value,
        opts: RequestOptions,
    ) -> Result<Value, ClientError> {
        let params = to_object(method, &params)?;
        let value = self.inner.execute(method, params, &opts, true).await?;
        crate::tasks::settle(&self.inner, method, value).await
    }

    /// Sends a notification by name.
    pub async fn notify(&self, method: &str, params: Option<Value>) {
        let params = match (self.inner.era(), params) {
            (Era::Modern, p) => {
                let mut map = match p {
                    Some(Value::Object(m)) => m,
                    _ => JsonObject::new(),
                };
                self.inner.stamp_envelope(&mut map);
                Some(Value::Object(map))
            }
            (_, p) => p,
        };
        ferromcp_dispatch::Outbound::notify(
            self.inner.dispatcher.as_ref(),
            method,
            params.map(Payload::from),
        )
        .await;
    }

    /// Checks the server is alive: `ping` in the handshake era; at 2026-07-28, which removed
    /// `ping`, a `server/discover` that bypasses the cache.
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.inner.era() == Era::Modern {
            let opts = RequestOptions::new().cache(crate::cache::CacheMode::Bypass);
            return self.discover(opts).await.map(drop);
        }
        self.request::<methods::Ping>(RequestParams::new(), RequestOptions::new())
            .await
            .map(drop)
    }

    /// `server/discover` (2026-07-28; cached).
    pub async fn discover(&self, opts: RequestOptions) -> Result<DiscoverResult, ClientError> {
        self.request::<methods::Discover>(RequestParams::new(), opts)
            .await
    }

    /// `tools/list`: one page (the first when `cursor` is `None`, which is cached).
    pub async fn list_tools(&self, cursor: Option<Cursor>) -> Result<ListToolsResult, ClientError> {
        self.list_tools_with(cursor, RequestOptions::new()).await
    }

    /// `tools/list` with options (cache mode, timeout).
    pub async fn list_tools_with(
        &self,
        cursor: Option<Cursor>,
        opts: RequestOptions,
    ) -> Result<ListToolsResult, ClientError> {
        self.request::<methods::ListTools>(paginated(cursor), opts)
            .await
    }

    /// `tools/call` with JSON arguments (an object, or null for none).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, RequestOptions::new())
            .await
    }

    /// `tools/call` with options (progress callback, timeouts).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        opts: RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        // A 2025-11-25 tool declared `taskSupport: required` runs as a task.
        if self.must_run_as_task(name)? {
            let call = self.call_tool_as_task_with(name, arguments, None, opts);
            return call.await?.result().await;
        }
        let mut params = CallToolRequestParams::new(name);
        params.arguments = match arguments {
            Value::Null => None,
            Value::Object(map) => Some(map),
            other => {
                return Err(ClientError::Encode {
                    method: methods::TOOLS_CALL.into(),
                    detail: format!("tool arguments must be an object, got {other}"),
                });
            }
        };
        self.request::<methods::CallTool>(params, opts).await
    }

    /// `tools/call` with typed arguments and a typed output.
    ///
    /// The output comes from `structuredContent` (or, when there is none and the tool
    /// declares no output schema, from the first text block parsed as JSON). When the tool
    /// declared an `outputSchema` in a `tools/list` this client saw, `structuredContent` must
    /// be present (and an object when the schema says so). A result with `isError: true` is a
    /// [`ClientError::OutputSchema`] carrying the tool's message.
    pub async fn call_tool_typed<A: Serialize, O: DeserializeOwned>(
        &self,
        name: &str,
        arguments: &A,
    ) -> Result<O, ClientError> {
        let args = to_object(methods::TOOLS_CALL, arguments)?;
        let result = self.call_tool(name, Value::Object(args)).await?;
        let fail = |detail: String| ClientError::OutputSchema {
            tool: name.to_owned(),
            detail,
        };
        if result.is_error == Some(true) {
            let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
            return Err(fail(format!("the tool failed: {}", text.join(" "))));
        }
        let schema = lock(&self.inner.output_schemas)
            .get(name)
            .cloned()
            .flatten();
        let value = match (&result.structured_content, &schema) {
            (Some(v), Some(schema)) => {
                let wants_object = schema.get("type").and_then(Value::as_str) == Some("object");
                if wants_object && !v.is_object() {
                    return Err(fail("structuredContent is not an object".into()));
                }
                v.clone()
            }
            (Some(v), None) => v.clone(),
            (None, Some(_)) => {
                return Err(fail(
                    "the tool declares an outputSchema but returned no structuredContent".into(),
                ));
            }
            (None, None) => {
                let text = result.content.iter().find_map(|c| c.as_text());
                match text.map(serde_json::from_str::<Value>) {
                    Some(Ok(v)) => v,
                    _ => return Err(fail("no structuredContent and no JSON text".into())),
                }
            }
        };
        serde_json::from_value(value).map_err(|e| fail(format!("output does not decode: {e}")))
    }

    /// `resources/list`: one page (the first is cached).
    pub async fn list_resources(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.request::<methods::ListResources>(paginated(cursor), RequestOptions::new())
            .await
    }

    /// `resources/templates/list`: one page (the first is cached).
    pub async fn list_resource_templates(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.request::<methods::ListResourceTemplates>(paginated(cursor), RequestOptions::new())
            .await
    }

    /// `resources/read` (cached by URI).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.read_resource_with(uri, RequestOptions::new()).await
    }

    /// `resources/read` with options.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        opts: RequestOptions,
    ) -> Result<ReadResourceResult, ClientError> {
        self.request::<methods::ReadResource>(ReadResourceRequestParams::new(uri), opts)
            .await
    }

    /// `resources/subscribe` (handshake era; at 2026-07-28 use `subscriptions/listen`).
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.handshake_only(methods::RESOURCES_SUBSCRIBE)?;
        self.request::<methods::Subscribe>(ResourceUriParams::new(uri), RequestOptions::new())
            .await
            .map(drop)
    }

    /// `resources/unsubscribe` (handshake era).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.handshake_only(methods::RESOURCES_UNSUBSCRIBE)?;
        self.request::<methods::Unsubscribe>(ResourceUriParams::new(uri), RequestOptions::new())
            .await
            .map(drop)
    }

    /// `prompts/list`: one page (the first is cached).
    pub async fn list_prompts(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListPromptsResult, ClientError> {
        self.request::<methods::ListPrompts>(paginated(cursor), RequestOptions::new())
            .await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (String, String)>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = GetPromptRequestParams::new(name);
        let args: std::collections::BTreeMap<String, String> = arguments.into_iter().collect();
        if !args.is_empty() {
            params.arguments = Some(args.into_iter().collect());
        }
        self.request::<methods::GetPrompt>(params, RequestOptions::new())
            .await
    }

    /// `completion/complete`.
    pub async fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, ClientError> {
        self.request::<methods::Complete>(params, RequestOptions::new())
            .await
    }

    /// Sets the server's log level: `logging/setLevel` in the handshake era; at 2026-07-28
    /// (where logging is per request) every later request carries it as
    /// `io.modelcontextprotocol/logLevel`.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.inner.era() == Era::Modern {
            *lock(&self.inner.log_level) = Some(level);
            return Ok(());
        }
        self.request::<methods::SetLevel>(SetLevelRequestParams::new(level), RequestOptions::new())
            .await
            .map(drop)
    }

    /// Tells the server the roots changed (`notifications/roots/list_changed`, handshake era).
    pub async fn notify_roots_list_changed(&self) -> Result<(), ClientError> {
        let method = methods::NOTIFICATION_ROOTS_LIST_CHANGED;
        self.handshake_only(method)?;
        self.notify(method, None).await;
        Ok(())
    }

    fn handshake_only(&self, method: &str) -> Result<(), ClientError> {
        match self.inner.era() {
            Era::Modern => Err(ClientError::not_available(
                method,
                "the connection runs MCP 2026-07-28, which has no such method",
            )),
            _ => Ok(()),
        }
    }
}
