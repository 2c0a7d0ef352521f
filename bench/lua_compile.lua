-- bench/lua_compile.lua ROUNDS: a compiler-shaped, allocation-heavy Lua
-- workload for the runtime benchmark (run by Debian's lua5.4 interpreter
-- built from source).
--
-- Each round generates the source text of a toy language (functions of
-- nested arithmetic expressions over local names), lexes it into token
-- tables, parses the tokens into AST tables, folds constants and renames
-- locals through per-function symbol tables, emits target text as string
-- pieces joined with table.concat, and counts the emitted words. Everything a
-- round builds is garbage by the next one, so Lua's collector frees it while
-- the next round allocates: many small tables and strings (realloc and free
-- through lua's l_alloc), growing arrays and hash parts, and long strings.
-- Deterministic: its own generator, a fixed seed, and a checksum printed at
-- the end (the same for every runtime).

local ROUNDS = tonumber(arg and arg[1]) or 6
local FUNCS = 1500

local seed = 12345
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end

-- ---- source generation ----------------------------------------------------

local OPS = { "+", "-", "*", "/" }

local function gen_expr(names, depth, out)
  if depth == 0 or rand(4) == 0 then
    if rand(3) == 0 then
      out[#out + 1] = tostring(rand(1000))
    else
      out[#out + 1] = names[rand(#names) + 1]
    end
    return
  end
  out[#out + 1] = "("
  gen_expr(names, depth - 1, out)
  out[#out + 1] = OPS[rand(4) + 1]
  gen_expr(names, depth - 1, out)
  out[#out + 1] = ")"
end

local function gen_source(round)
  local out = {}
  for f = 1, FUNCS do
    local names = {}
    for i = 1, 2 + rand(5) do
      names[i] = string.format("v%d_%d", round, rand(50))
    end
    out[#out + 1] = "fn f" .. f .. " ( " .. table.concat(names, " ") .. " ) {"
    for _ = 1, 1 + rand(4) do
      local target = names[rand(#names) + 1]
      out[#out + 1] = "let " .. target .. " ="
      gen_expr(names, 5, out)
      out[#out + 1] = ";"
    end
    out[#out + 1] = "ret"
    gen_expr(names, 4, out)
    out[#out + 1] = "; }\n"
  end
  return table.concat(out, " ")
end

-- ---- lexer -----------------------------------------------------------------

-- The generator separates every token by a space, so a token is a run of
-- non-space characters; its first byte gives its kind.
local function lex(src)
  local toks = {}
  for at, word in string.gmatch(src, "()(%S+)") do
    local b = string.byte(word)
    if b == 95 or (b >= 97 and b <= 122) or (b >= 65 and b <= 90) then
      toks[#toks + 1] = { kind = "name", text = word, at = at }
    elseif b >= 48 and b <= 57 then
      toks[#toks + 1] = { kind = "num", value = tonumber(word), at = at }
    else
      toks[#toks + 1] = { kind = word, at = at }
    end
  end
  toks[#toks + 1] = { kind = "eof", at = #src + 1 }
  return toks
end

-- ---- parser ----------------------------------------------------------------

local Parser = {}
Parser.__index = Parser

local function new_parser(toks)
  return setmetatable({ toks = toks, i = 1 }, Parser)
end

function Parser:peek() return self.toks[self.i] end

function Parser:next()
  local t = self.toks[self.i]
  self.i = self.i + 1
  return t
end

function Parser:expect(kind, text)
  local t = self:next()
  if t.kind ~= kind or (text and t.text ~= text) then
    error(string.format("expected %s %s at %d, got %s", kind, text or "",
                        t.at, t.text or t.kind))
  end
  return t
end

local PREC = { ["+"] = 1, ["-"] = 1, ["*"] = 2, ["/"] = 2 }

function Parser:primary()
  local t = self:next()
  if t.kind == "num" then return { tag = "num", value = t.value } end
  if t.kind == "name" then return { tag = "var", name = t.text } end
  if t.kind == "(" then
    local e = self:expr(1)
    self:expect(")")
    return e
  end
  error("unexpected token at " .. t.at)
end

function Parser:expr(min_prec)
  local lhs = self:primary()
  while true do
    local op = self:peek().kind
    local p = PREC[op]
    if not p or p < min_prec then return lhs end
    self:next()
    local rhs = self:expr(p + 1)
    lhs = { tag = "bin", op = op, lhs = lhs, rhs = rhs }
  end
end

function Parser:func()
  self:expect("name", "fn")
  local name = self:expect("name").text
  self:expect("(")
  local params = {}
  while self:peek().kind == "name" do params[#params + 1] = self:next().text end
  self:expect(")")
  self:expect("{")
  local body = {}
  while self:peek().text == "let" do
    self:next()
    local target = self:expect("name").text
    self:expect("=")
    body[#body + 1] = { tag = "let", target = target, value = self:expr(1) }
    self:expect(";")
  end
  self:expect("name", "ret")
  local ret = self:expr(1)
  self:expect(";")
  self:expect("}")
  return { tag = "fn", name = name, params = params, body = body, ret = ret }
end

function Parser:program()
  local funcs = {}
  while self:peek().kind ~= "eof" do funcs[#funcs + 1] = self:func() end
  return funcs
end

-- ---- passes ----------------------------------------------------------------

local function fold(e)
  if e.tag ~= "bin" then return e end
  local l, r = fold(e.lhs), fold(e.rhs)
  if l.tag == "num" and r.tag == "num" then
    local a, b = l.value, r.value
    if e.op == "+" then return { tag = "num", value = a + b } end
    if e.op == "-" then return { tag = "num", value = a - b } end
    if e.op == "*" then return { tag = "num", value = a * b } end
    if b ~= 0 then return { tag = "num", value = a // b } end
  end
  return { tag = "bin", op = e.op, lhs = l, rhs = r }
end

local function rename(e, syms)
  if e.tag == "var" then
    local s = syms[e.name]
    if not s then
      s = { slot = "r" .. (syms.n + 1), uses = 0 }
      syms.n = syms.n + 1
      syms[e.name] = s
    end
    s.uses = s.uses + 1
    return { tag = "reg", slot = s.slot }
  elseif e.tag == "bin" then
    return { tag = "bin", op = e.op, lhs = rename(e.lhs, syms), rhs = rename(e.rhs, syms) }
  end
  return e
end

local OPNAMES = { ["+"] = "add", ["-"] = "sub", ["*"] = "mul", ["/"] = "div" }

-- Emits three-address code for e into out; returns the operand naming it.
local function emit(e, out, ctx)
  if e.tag == "num" then return "#" .. e.value end
  if e.tag == "reg" then return e.slot end
  local a = emit(e.lhs, out, ctx)
  local b = emit(e.rhs, out, ctx)
  ctx.tmp = ctx.tmp + 1
  local t = "t" .. ctx.tmp
  out[#out + 1] = string.format("  %s = %s %s, %s", t, OPNAMES[e.op], a, b)
  return t
end

local function compile(funcs)
  local out = {}
  for _, f in ipairs(funcs) do
    local syms = { n = 0 }
    for _, p in ipairs(f.params) do rename({ tag = "var", name = p }, syms) end
    out[#out + 1] = f.name .. ":"
    local ctx = { tmp = 0 }
    for _, st in ipairs(f.body) do
      local v = emit(rename(fold(st.value), syms), out, ctx)
      local dst = rename({ tag = "var", name = st.target }, syms)
      out[#out + 1] = "  mov " .. dst.slot .. ", " .. v
    end
    out[#out + 1] = "  ret " .. emit(rename(fold(f.ret), syms), out, ctx)
  end
  return table.concat(out, "\n")
end

local function word_counts(text)
  local counts = {}
  for w in string.gmatch(text, "[%w#]+") do counts[w] = (counts[w] or 0) + 1 end
  local list = {}
  for w, n in pairs(counts) do list[#list + 1] = { w = w, n = n } end
  table.sort(list, function(a, b)
    if a.n ~= b.n then return a.n > b.n end
    return a.w < b.w
  end)
  return list
end

-- ---- driver ----------------------------------------------------------------

local check = 0
for round = 1, ROUNDS do
  local src = gen_source(round)
  local funcs = new_parser(lex(src)):program()
  local code = compile(funcs)
  local words = word_counts(code)
  check = (check * 31 + #code + #words + words[1].n) % 1000000007
end
print(string.format("rounds=%d checksum=%d", ROUNDS, check))
