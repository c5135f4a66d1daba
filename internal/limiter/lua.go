package limiter

// The Redis scripts. Each runs atomically on the Redis server, on the
// server's clock, so replicas with skewed clocks still share one window.
// Their arithmetic is window.go's and memory.go's; keep them in step.
//
// The server's clock is moved as the process's is (clock.Offset): every
// script's ARGV[1] is the offset in microseconds, which clock() adds to
// TIME, so that period ends computed in Go, and window slots and lease
// deadlines computed here, are on one clock. The arguments each script
// documents follow it.
//
// Numbers are Lua doubles: exact up to 2^53. Go sends no amount or limit
// outside [0, 2^53] (maxAmount), and what the scripts store they keep
// within it (MAX), so no sum leaves the exact range or overflows Redis's
// integers. Values go back to Redis through fmt() so that large ones are
// never written in exponent form.
//
// Keys, per check's base key K:
//
//	window    K            hash  slot index -> amount
//	parallel  K            zset  request id -> lease deadline (ms)
//	budget    K            hash  e (epoch), c (committed spend), r (reserved)
//	          K:s          hash  slot index -> committed spend (rolling periods)
//	          K:l          zset  request id -> lease deadline (ms)
//	          K:a          hash  request id -> reserved amount
const luaCommon = `
local KEEP = 61
local MAX = 9007199254740992
local OFFSET = tonumber(ARGV[1])
local function fmt(x) return string.format('%.0f', x) end
local function clamp(x) return math.min(math.max(x, 0), MAX) end
local function clock()
  local t = redis.call('TIME')
  return math.floor((tonumber(t[1]) * 1000000 + tonumber(t[2]) + OFFSET) / 1000)
end
local function wsum(key, cur)
  local flat = redis.call('HGETALL', key)
  local sum, newest = 0, -1
  for j = 1, #flat, 2 do
    local s, v = tonumber(flat[j]), tonumber(flat[j + 1])
    if s <= cur - KEEP then
      redis.call('HDEL', key, flat[j])
    else
      sum = clamp(sum + v)
      if v > 0 and s > newest then newest = s end
    end
  end
  return sum, newest
end
local function addto(key, field, x)
  local v = clamp(tonumber(redis.call('HGET', key, field) or '0') + x)
  redis.call('HSET', key, field, fmt(v))
  return v
end
local function wretry(key, cur, slotms, sum, amount, limit)
  if amount > limit then return 0 end
  for s = cur - KEEP + 1, cur do
    sum = sum - tonumber(redis.call('HGET', key, fmt(s)) or '0')
    if sum + amount <= limit then return (s + KEEP) * slotms end
  end
  return (cur + KEEP) * slotms
end
local function wreset(newest, slotms)
  if newest < 0 then return 0 end
  return (newest + KEEP) * slotms
end
`

// luaAdmit: KEYS = one base key per check. ARGV = offset, member, lease
// ms, then per check: kind (w window, p parallel, b budget), limit, amount,
// slot ms, end ms (budgets; 0 none), ttl ms (budgets).
// Returns {status (0 ok, 1 refused, 2 reload), refused index (1-based),
// now, retry, then per check used, reset, slot, epoch}; status 2 is
// followed by the indexes of the budgets to reload.
const luaAdmit = luaCommon + `
local member, lease = ARGV[2], tonumber(ARGV[3])
local now = clock()
local n = #KEYS
local used, reset, slot, epoch, newest = {}, {}, {}, {}, {}
local refused, retry = 0, 0
local reload = {}
for i = 1, n do
  local a = 4 + (i - 1) * 6
  local kind, limit, amount = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local slotms, endms = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local k = KEYS[i]
  used[i], reset[i], slot[i], epoch[i], newest[i] = 0, 0, 0, '', -1
  local fail = nil
  if kind == 'w' then
    local cur = math.floor(now / slotms)
    local sum, nw = wsum(k, cur)
    used[i], newest[i], slot[i], reset[i] = sum, nw, cur, wreset(nw, slotms)
    if clamp(sum + amount) > limit then fail = wretry(k, cur, slotms, sum, amount, limit) end
  elseif kind == 'p' then
    redis.call('ZREMRANGEBYSCORE', k, '-inf', fmt(now))
    local c = redis.call('ZCARD', k)
    used[i] = c
    if c + 1 > limit then fail = now + 1000 end
  else
    local e = redis.call('HGET', k, 'e')
    if not e then
      reload[#reload + 1] = i
    else
      local expired = redis.call('ZRANGEBYSCORE', k .. ':l', '-inf', fmt(now))
      if #expired > 0 then
        local freed = 0
        for _, m in ipairs(expired) do
          freed = freed + tonumber(redis.call('HGET', k .. ':a', m) or '0')
          redis.call('HDEL', k .. ':a', m)
        end
        redis.call('ZREMRANGEBYSCORE', k .. ':l', '-inf', fmt(now))
        addto(k, 'r', -freed)
      end
      local reserved = clamp(tonumber(redis.call('HGET', k, 'r') or '0'))
      local spent, nw = 0, -1
      if slotms > 0 then
        slot[i] = math.floor(now / slotms)
        spent, nw = wsum(k .. ':s', slot[i])
      else
        spent = clamp(tonumber(redis.call('HGET', k, 'c') or '0'))
      end
      used[i], newest[i], epoch[i], reset[i] = clamp(spent + reserved), nw, e, endms
      if slotms > 0 then reset[i] = wreset(nw, slotms) end
      if clamp(used[i] + amount) > limit then
        if clamp(spent + amount) <= limit then
          fail = now + 1000
        elseif slotms > 0 then
          fail = wretry(k .. ':s', slot[i], slotms, spent, amount, limit)
        elseif amount > limit then
          fail = 0
        else
          fail = endms
        end
      end
    end
  end
  if fail and refused == 0 then refused, retry = i, fail end
end
if #reload > 0 then
  local out = {2, 0, now, 0}
  for _, i in ipairs(reload) do out[#out + 1] = i end
  return out
end
if refused == 0 then
  for i = 1, n do
    local a = 4 + (i - 1) * 6
    local kind, amount = ARGV[a], tonumber(ARGV[a + 2])
    local slotms, endms, ttl = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
    local k = KEYS[i]
    if kind == 'w' then
      addto(k, fmt(slot[i]), amount)
      redis.call('PEXPIRE', k, fmt((KEEP + 1) * slotms))
      used[i] = clamp(used[i] + amount)
      if amount > 0 then newest[i] = slot[i] end
      reset[i] = wreset(newest[i], slotms)
    elseif kind == 'p' then
      redis.call('ZADD', k, fmt(now + lease), member)
      redis.call('PEXPIRE', k, fmt(2 * lease))
      used[i] = used[i] + 1
    else
      addto(k .. ':a', member, amount)
      redis.call('ZADD', k .. ':l', fmt(now + lease), member)
      addto(k, 'r', amount)
      for _, key in ipairs({k, k .. ':s', k .. ':l', k .. ':a'}) do
        redis.call('PEXPIRE', key, fmt(ttl))
      end
      used[i] = clamp(used[i] + amount)
      reset[i] = endms
      if slotms > 0 then reset[i] = wreset(newest[i], slotms) end
    end
  end
end
local out = {refused == 0 and 0 or 1, refused, now, retry}
for i = 1, n do
  out[#out + 1] = used[i]
  out[#out + 1] = reset[i]
  out[#out + 1] = slot[i]
  out[#out + 1] = epoch[i]
end
return out
`

// luaSeed: KEYS[1] = a budget's base key. ARGV = offset, epoch, ttl ms,
// total, then slot, amount pairs. It starts the counter unless another
// replica already has.
const luaSeed = luaCommon + `
local k = KEYS[1]
if redis.call('HSETNX', k, 'e', ARGV[2]) == 0 then return 0 end
redis.call('DEL', k .. ':s', k .. ':l', k .. ':a')
redis.call('HSET', k, 'c', fmt(clamp(tonumber(ARGV[4]))), 'r', '0')
for j = 5, #ARGV, 2 do
  redis.call('HSET', k .. ':s', ARGV[j], fmt(clamp(tonumber(ARGV[j + 1]))))
end
for _, key in ipairs({k, k .. ':s'}) do
  redis.call('PEXPIRE', key, ARGV[3])
end
return 1
`

// luaSettle: KEYS = one base key per settlement. ARGV = offset, member,
// then per settlement: kind (t tokens, p parallel, b budget), reserved
// amount, actual, slot, slot ms, epoch.
const luaSettle = luaCommon + `
local member = ARGV[2]
local now = clock()
for i = 1, #KEYS do
  local a = 3 + (i - 1) * 6
  local kind, amount, actual = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local slot, slotms, epoch = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), ARGV[a + 5]
  local k = KEYS[i]
  if kind == 't' then
    if slot > math.floor(now / slotms) - KEEP and redis.call('HEXISTS', k, fmt(slot)) == 1 then
      addto(k, fmt(slot), actual - amount)
    end
  elseif kind == 'p' then
    redis.call('ZREM', k, member)
  else
    local e = redis.call('HGET', k, 'e')
    if e then
      if e == epoch then
        local r = redis.call('HGET', k .. ':a', member)
        if r then
          redis.call('HDEL', k .. ':a', member)
          redis.call('ZREM', k .. ':l', member)
          addto(k, 'r', -tonumber(r))
        end
      end
      if slotms == 0 then
        addto(k, 'c', actual)
      elseif slot > math.floor(now / slotms) - KEEP then
        addto(k .. ':s', fmt(slot), actual)
      end
    end
  end
end
return 1
`

// luaRenew: KEYS = lease sets; ARGV = offset, lease ms, then one member
// per key. It extends leases that still exist.
const luaRenew = luaCommon + `
local deadline = fmt(clock() + tonumber(ARGV[2]))
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], 'XX', deadline, ARGV[i + 2])
end
return 1
`

// luaPeek: KEYS = one base key per check. ARGV = offset, then per check:
// kind (w window, p parallel, b budget), slot ms. It changes nothing and
// returns per check what admit would count before adding the request:
// the window's sum, the live leases, or a budget's spend plus its live
// reservations; -1 for a budget whose counter is not loaded.
const luaPeek = luaCommon + `
local now = clock()
local out = {}
for i = 1, #KEYS do
  local kind, slotms = ARGV[2 * i], tonumber(ARGV[2 * i + 1])
  local k = KEYS[i]
  local function sum(key)
    local flat, cur, total = redis.call('HGETALL', key), math.floor(now / slotms), 0
    for j = 1, #flat, 2 do
      if tonumber(flat[j]) > cur - KEEP then total = clamp(total + tonumber(flat[j + 1])) end
    end
    return total
  end
  if kind == 'w' then
    out[i] = sum(k)
  elseif kind == 'p' then
    out[i] = redis.call('ZCOUNT', k, '(' .. fmt(now), '+inf')
  elseif not redis.call('HGET', k, 'e') then
    out[i] = -1
  else
    local reserved = 0
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', k .. ':l', '(' .. fmt(now), '+inf')) do
      reserved = clamp(reserved + tonumber(redis.call('HGET', k .. ':a', m) or '0'))
    end
    local spent
    if slotms > 0 then spent = sum(k .. ':s') else spent = clamp(tonumber(redis.call('HGET', k, 'c') or '0')) end
    out[i] = clamp(spent + reserved)
  end
end
return out
`
