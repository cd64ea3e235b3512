//! Pagination helpers: follow `nextCursor` to the end, with a page bound and repeated-cursor
//! detection.

use std::collections::HashSet;

use ferromcp_types::jsonrpc::ErrorCode;
use ferromcp_types::mcp::methods::{self, Request};
use ferromcp_types::mcp::{
    Cursor, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListTasksResult,
    ListToolsResult, PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Task, Tool,
};

use crate::client::Client;
use crate::error::ClientError;
use crate::options::RequestOptions;

/// A page of a list result.
pub(crate) trait Page {
    type Item;
    fn into_parts(self) -> (Vec<Self::Item>, Option<Cursor>);
}

macro_rules! page {
    ($result:ty, $item:ty, $field:ident) => {
        impl Page for $result {
            type Item = $item;
            fn into_parts(self) -> (Vec<$item>, Option<Cursor>) {
                (self.$field, self.next_cursor)
            }
        }
    };
}

page!(ListToolsResult, Tool, tools);
page!(ListPromptsResult, Prompt, prompts);
page!(ListTasksResult, Task, tasks);
page!(ListResourcesResult, Resource, resources);
page!(
    ListResourceTemplatesResult,
    ResourceTemplate,
    resource_templates
);

/// The default bound on pages one `list_all_*` call follows.
pub const DEFAULT_MAX_PAGES: usize = 1000;

impl Client {
    pub(crate) async fn list_all<R>(&self) -> Result<Vec<<R::Result as Page>::Item>, ClientError>
    where
        R: Request<Params = PaginatedRequestParams>,
        R::Result: Page,
    {
        let max_pages = self.inner.settings.max_pages;
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<Cursor> = None;
        for _ in 0..max_pages {
            let params = match cursor.clone() {
                Some(c) => PaginatedRequestParams::new().with_cursor(c),
                None => PaginatedRequestParams::new(),
            };
            let page = match self.request::<R>(params, RequestOptions::new()).await {
                Ok(page) => page,
                Err(e) => {
                    // A cursor the server no longer accepts: the cached first page is stale.
                    if cursor.is_some() && e.code() == Some(ErrorCode::INVALID_PARAMS) {
                        self.inner.cache.evict_list(R::METHOD);
                    }
                    return Err(e);
                }
            };
            let (mut page_items, next) = page.into_parts();
            items.append(&mut page_items);
            match next {
                None => return Ok(items),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(ClientError::Pagination {
                            method: R::METHOD.to_owned(),
                            detail: format!("the server repeated the cursor {next:?}"),
                        });
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(ClientError::Pagination {
            method: R::METHOD.to_owned(),
            detail: format!("more than {max_pages} pages"),
        })
    }

    /// Every tool, following `nextCursor`.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all::<methods::ListTools>().await
    }

    /// Every prompt, following `nextCursor`.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all::<methods::ListPrompts>().await
    }

    /// Every resource, following `nextCursor`.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all::<methods::ListResources>().await
    }

    /// Every resource template, following `nextCursor`.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all::<methods::ListResourceTemplates>().await
    }
}
