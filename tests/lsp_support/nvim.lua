-- Driven by tests/it/lsp.rs: open $SAVANT_FILE in headless Neovim with
-- `savant-think lsp` attached, wait for diagnostics, hover the position
-- $SAVANT_HOVER_LINE/$SAVANT_HOVER_COL (0-based, UTF-16) and write what the
-- editor holds to $SAVANT_OUT as JSON.
local bin, file, out = os.getenv('SAVANT_BIN'), os.getenv('SAVANT_FILE'), os.getenv('SAVANT_OUT')
local result = { diagnostics = {}, hover = vim.NIL, error = vim.NIL }
local function finish()
  local f = io.open(out, 'w')
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qa!')
end
local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local id = vim.lsp.start_client({ name = 'savant-think', cmd = { bin, 'lsp' }, root_dir = vim.fn.fnamemodify(file, ':h:h') })
  assert(id, 'the client started')
  vim.lsp.buf_attach_client(0, id)
  assert(vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50), 'diagnostics arrived')
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col, message = d.message, code = d.code })
  end
  local params = {
    textDocument = { uri = vim.uri_from_fname(file) },
    position = { line = tonumber(os.getenv('SAVANT_HOVER_LINE')), character = tonumber(os.getenv('SAVANT_HOVER_COL')) },
  }
  local answers = vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 30000) or {}
  for _, a in pairs(answers) do
    if a.result then result.hover = a.result.contents.value end
  end
end)
if not ok then result.error = tostring(err) end
finish()
