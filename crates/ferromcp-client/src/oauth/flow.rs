//! The flow after a challenge: discovery, then the configured grant.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use url::Url;

use super::discovery::{
    Challenge, Limits, discover_as, discover_prm, endpoint, is_loopback, legacy_as, parse_url,
    resource_matches, send, strings,
};
use super::guard::HttpClient;
use super::headless::FlowHttp;
use super::jwt::{DpopKey, random_token};
use super::token::{AuthMethod, TokenGrant, choose_method};
use super::{EnterpriseGrant, Grant, OAuthConfig, OAuthError, Tokens};

const GRANT_JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// What a completed flow obtained.
pub(super) struct Obtained {
    pub(super) tokens: Tokens,
    /// The scope asked for.
    pub(super) scope: Option<String>,
    /// The client at the token endpoint (for the refresh grant).
    pub(super) grant: TokenGrant,
}

/// What discovery found.
struct Discovered {
    /// Protected-resource metadata (`{}` for a 2025-03-26 server).
    prm: Value,
    /// The resource indicator: the metadata's `resource`, else the server URL.
    resource: String,
    /// Authorization-server metadata.
    asm: Value,
}

async fn discover(
    http: &HttpClient,
    limits: Limits,
    server: &Url,
    challenge: &Challenge,
) -> Result<Discovered, OAuthError> {
    let found = discover_prm(http, limits, server, challenge.resource_metadata.as_deref()).await?;
    let Some(prm) = found else {
        // A 2025-03-26 server (no protected-resource metadata, and none named in the
        // challenge): the authorization server is the MCP server's origin, its metadata at
        // the root well-known path, else the default endpoints /authorize, /token, /register.
        return Ok(Discovered {
            prm: json!({}),
            resource: server.to_string(),
            asm: legacy_as(http, limits, server).await?,
        });
    };
    let resource = prm
        .get("resource")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            OAuthError::Discovery("protected-resource metadata has no `resource`".into())
        })?
        .to_owned();
    if !resource_matches(&resource, server) {
        return Err(OAuthError::Discovery(format!(
            "protected-resource metadata is for {resource}, not {server}"
        )));
    }
    let issuer = prm
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .ok_or_else(|| OAuthError::Discovery("no `authorization_servers`".into()))?
        .to_owned();
    let asm = discover_as(http, limits, &issuer).await?;
    Ok(Discovered { prm, resource, asm })
}

/// Runs discovery and the configured grant for the challenge.
pub(super) async fn flow(
    http: &HttpClient,
    server: &Url,
    challenge: &Challenge,
    cfg: &OAuthConfig,
    dpop: Option<&DpopKey>,
) -> Result<Obtained, OAuthError> {
    let limits = Limits::of(cfg);
    let d = discover(http, limits, server, challenge).await?;
    // Scope: the challenge's, else the resource's scopes_supported, else none (2025-11-25
    // "Scope Selection Strategy").
    let scope = challenge
        .scope
        .clone()
        .or_else(|| {
            d.prm
                .get("scopes_supported")
                .and_then(Value::as_array)
                .map(|_| strings(&d.prm, "scopes_supported").join(" "))
        })
        .filter(|s| !s.is_empty());
    let token_endpoint = endpoint(&d.asm, "token_endpoint")?;
    let issuer = d
        .asm
        .get("issuer")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| token_endpoint.origin().ascii_serialization());
    // DPoP when configured and the server takes ES256 proofs (RFC 9449 §5.1).
    let dpop = dpop
        .filter(|_| strings(&d.asm, "dpop_signing_alg_values_supported").contains(&"ES256"))
        .cloned();
    let supported = strings(&d.asm, "token_endpoint_auth_methods_supported");
    let configured = |registered: Option<&str>| -> Result<TokenGrant, OAuthError> {
        let c = cfg.credentials.as_ref().ok_or_else(|| {
            OAuthError::Config("this grant needs pre-registered client credentials".into())
        })?;
        Ok(TokenGrant {
            token_endpoint: token_endpoint.clone(),
            issuer: issuer.clone(),
            client_id: c.client_id.clone(),
            client_secret: c.client_secret.clone(),
            private_key: c.private_key.clone(),
            method: choose_method(
                c.client_secret.is_some(),
                c.private_key.is_some(),
                registered,
                &supported,
            ),
            resource: Some(d.resource.clone()),
            dpop: dpop.clone(),
            limits,
        })
    };
    let with_scope = |mut params: Vec<(&'static str, String)>| {
        if let Some(s) = &scope {
            params.push(("scope", s.clone()));
        }
        params
    };
    let (tokens, grant) = match &cfg.grant {
        Grant::AuthorizationCode => {
            return authorization_code(http, cfg, d, scope, token_endpoint, issuer, dpop).await;
        }
        Grant::ClientCredentials => {
            let grant = configured(None)?;
            if grant.method == AuthMethod::None {
                return Err(OAuthError::Config(
                    "the client-credentials grant needs a client secret or private key".into(),
                ));
            }
            let params = with_scope(vec![("grant_type", "client_credentials".to_owned())]);
            (request(http, &grant, &params).await?, grant)
        }
        Grant::JwtBearer { assertion } => {
            let grant = match cfg.credentials {
                Some(_) => configured(None)?,
                None => TokenGrant {
                    token_endpoint: token_endpoint.clone(),
                    issuer: issuer.clone(),
                    client_id: String::new(),
                    client_secret: None,
                    private_key: None,
                    method: AuthMethod::None,
                    resource: Some(d.resource.clone()),
                    dpop: dpop.clone(),
                    limits,
                },
            };
            let params = with_scope(vec![
                ("grant_type", GRANT_JWT_BEARER.to_owned()),
                ("assertion", assertion.clone()),
            ]);
            (request(http, &grant, &params).await?, grant)
        }
        Grant::EnterpriseManaged(e) => {
            let id_jag = id_jag(http, limits, e, &issuer, &d.resource, scope.as_deref()).await?;
            let grant = configured(None)?;
            let params = with_scope(vec![
                ("grant_type", GRANT_JWT_BEARER.to_owned()),
                ("assertion", id_jag),
            ]);
            (request(http, &grant, &params).await?, grant)
        }
    };
    Ok(Obtained {
        tokens,
        scope,
        grant,
    })
}

async fn request(
    http: &HttpClient,
    grant: &TokenGrant,
    params: &[(&'static str, String)],
) -> Result<Tokens, OAuthError> {
    let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    grant.request(http, &pairs).await
}

/// SEP-990 step 1: the RFC 8693 token exchange at the IdP, ID token for an ID-JAG whose
/// audience is the authorization server and whose resource is the MCP server.
async fn id_jag(
    http: &HttpClient,
    limits: Limits,
    e: &EnterpriseGrant,
    issuer: &str,
    resource: &str,
    scope: Option<&str>,
) -> Result<String, OAuthError> {
    let idp = TokenGrant {
        token_endpoint: parse_url(&e.idp_token_endpoint)?,
        issuer: String::new(),
        client_id: e.idp_client_id.clone(),
        client_secret: e.idp_client_secret.clone(),
        private_key: None,
        method: if e.idp_client_secret.is_some() {
            AuthMethod::SecretBasic
        } else {
            AuthMethod::None
        },
        resource: Some(resource.to_owned()),
        dpop: None,
        limits,
    };
    let mut params = vec![
        ("grant_type", GRANT_TOKEN_EXCHANGE),
        ("requested_token_type", TOKEN_TYPE_ID_JAG),
        ("audience", issuer),
        ("subject_token", e.id_token.as_str()),
        ("subject_token_type", TOKEN_TYPE_ID_TOKEN),
    ];
    if let Some(s) = scope {
        params.push(("scope", s));
    }
    let answer = idp.request(http, &params).await?;
    Ok(answer.access_token)
}

/// The authorization-code grant with PKCE S256.
async fn authorization_code(
    http: &HttpClient,
    cfg: &OAuthConfig,
    d: Discovered,
    scope: Option<String>,
    token_endpoint: Url,
    issuer: String,
    dpop: Option<DpopKey>,
) -> Result<Obtained, OAuthError> {
    let asm = &d.asm;
    // 2025-11-25 "Communication Security" / OAuth 2.1 §7.5: redirect URIs are loopback
    // (`http` allowed) or `https`.
    match Url::parse(&cfg.redirect_uri) {
        Ok(u) if u.scheme() == "https" || (u.scheme() == "http" && is_loopback(&u)) => {}
        _ => {
            return Err(OAuthError::Config(format!(
                "the redirect URI {:?} is neither https nor a loopback http URL",
                cfg.redirect_uri
            )));
        }
    }
    if !strings(asm, "code_challenge_methods_supported").contains(&"S256") {
        return Err(OAuthError::Discovery(
            "the authorization server does not advertise PKCE S256".into(),
        ));
    }
    let authorization_endpoint = endpoint(asm, "authorization_endpoint")?;
    let supported = strings(asm, "token_endpoint_auth_methods_supported");

    // Client identification, in the 2025-11-25 order: pre-registered, client ID metadata
    // document, dynamic registration.
    let cimd = asm
        .get("client_id_metadata_document_supported")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (client_id, client_secret, private_key, registered_method) = match (
        &cfg.credentials,
        cfg.client_metadata_url.as_deref().filter(|_| cimd),
    ) {
        (Some(c), _) => (
            c.client_id.clone(),
            c.client_secret.clone(),
            c.private_key.clone(),
            None,
        ),
        (None, Some(url)) => {
            let u = Url::parse(url)
                .map_err(|e| OAuthError::Config(format!("client metadata URL: {e}")))?;
            if u.scheme() != "https" || u.path().trim_matches('/').is_empty() {
                return Err(OAuthError::Config(
                    "a client ID metadata document URL must be https with a path".into(),
                ));
            }
            (url.to_owned(), None, None, Some("none".to_owned()))
        }
        (None, None) => {
            let (id, secret, method) = register(http, Limits::of(cfg), cfg, asm).await?;
            (id, secret, None, method)
        }
    };

    // Authorization request with PKCE S256.
    let verifier = random_token(32)?;
    let challenge_s256 = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let state = random_token(16)?;
    let mut auth_url = authorization_endpoint.clone();
    {
        let mut q = auth_url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", &cfg.redirect_uri)
            .append_pair("code_challenge", &challenge_s256)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &d.resource);
        if let Some(s) = &scope {
            q.append_pair("scope", s);
        }
    }
    let lent = FlowHttp::new(http.clone(), Limits::of(cfg));
    let answer = cfg.handler.authorize_with(auth_url.as_str(), &lent).await?;
    if answer.state.as_deref() != Some(state.as_str()) {
        return Err(OAuthError::Authorization(
            "the redirect's state does not match".into(),
        ));
    }
    // RFC 9207: a present `iss` must equal the metadata's issuer exactly (no normalization);
    // an advertised one must be present.
    let recorded_issuer = asm
        .get("issuer")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let iss_advertised = asm
        .get("authorization_response_iss_parameter_supported")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match answer.iss.as_deref() {
        Some(iss) if iss != recorded_issuer => {
            return Err(OAuthError::Authorization(format!(
                "the redirect's iss {iss:?} is not the issuer {recorded_issuer:?}"
            )));
        }
        None if iss_advertised => {
            return Err(OAuthError::Authorization(
                "the authorization server advertises iss but the redirect has none".into(),
            ));
        }
        _ => {}
    }

    let method = choose_method(
        client_secret.is_some(),
        private_key.is_some(),
        registered_method.as_deref(),
        &supported,
    );
    let grant = TokenGrant {
        token_endpoint,
        issuer,
        client_id,
        client_secret,
        private_key,
        method,
        resource: Some(d.resource.clone()),
        dpop,
        limits: Limits::of(cfg),
    };
    let tokens = grant
        .request(
            http,
            &[
                ("grant_type", "authorization_code"),
                ("code", &answer.code),
                ("redirect_uri", &cfg.redirect_uri),
                ("code_verifier", &verifier),
            ],
        )
        .await?;
    Ok(Obtained {
        tokens,
        scope,
        grant,
    })
}

/// Dynamic client registration (RFC 7591): the client id, its secret, and its
/// `token_endpoint_auth_method`.
async fn register(
    http: &HttpClient,
    limits: Limits,
    cfg: &OAuthConfig,
    asm: &Value,
) -> Result<(String, Option<String>, Option<String>), OAuthError> {
    let reg = asm
        .get("registration_endpoint")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            OAuthError::Authorization(
                "no pre-registered credentials, no client ID metadata document and no \
                 registration_endpoint"
                    .into(),
            )
        })?;
    let reg = parse_url(reg)?;
    // SEP-837: `native` for a loopback redirect (desktop and CLI apps), else `web`.
    let application_type = match Url::parse(&cfg.redirect_uri) {
        Ok(u) if is_loopback(&u) => "native",
        _ => "web",
    };
    let body = json!({
        "application_type": application_type,
        "client_name": cfg.client_name,
        "redirect_uris": [cfg.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    let a = send(
        http,
        limits,
        Method::POST,
        &reg,
        Some(("application/json", body.to_string())),
        &[],
    )
    .await?;
    if !a.status.is_success() {
        return Err(OAuthError::Authorization(format!(
            "client registration answered {}",
            a.status
        )));
    }
    let v: Value = serde_json::from_slice(&a.body)
        .map_err(|e| OAuthError::Authorization(format!("registration answer: {e}")))?;
    let id = v
        .get("client_id")
        .and_then(Value::as_str)
        .ok_or_else(|| OAuthError::Authorization("registration without client_id".into()))?;
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    Ok((
        id.to_owned(),
        text("client_secret"),
        text("token_endpoint_auth_method"),
    ))
}
