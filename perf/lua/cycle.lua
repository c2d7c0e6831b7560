-- The claim + submit cycle under wrk: each wrk thread holds one connection and is one bot.
-- perf/cycle.py writes the plan (CYCLE_PLAN, one line per bot: its API key, then the arena ids it walks)
-- and runs `wrk -t N -c N -s perf/lua/cycle.lua`. A bot claims a slot of its next arena, carries the
-- claim id from the answer into the submit, and moves on; each bot's counts are printed by done().

local body = '{"resultType":"text","content":"result of the cycle"}'
local plan, threads, bots_set_up = {}, {}, 0

function setup(thread)
  if #plan == 0 then
    for line in io.lines(os.getenv("CYCLE_PLAN")) do plan[#plan + 1] = line end
  end
  bots_set_up = bots_set_up + 1
  thread:set("line", plan[bots_set_up])
  threads[#threads + 1] = thread
end

function init(args)
  arenas = {}
  for word in line:gmatch("%S+") do
    if key == nil then key = word else arenas[#arenas + 1] = word end
  end
  next_arena, claim, cycles, errors, exhausted, first_error = 1, nil, 0, 0, 0, ""
  claim_headers = {["Authorization"] = "Bearer " .. key}
  submit_headers = {["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json"}
end

function request()
  if claim ~= nil then
    return wrk.format("POST", "/v1/agent/claims/" .. claim .. "/submit", submit_headers, body)
  end
  if next_arena > #arenas then  -- every arena walked: count it, and claim the last again (refused)
    exhausted = exhausted + 1
    next_arena = #arenas
  end
  return wrk.format("POST", "/v1/agent/tasks/" .. arenas[next_arena] .. "/claim", claim_headers, "")
end

local function failed(status, answer)
  errors = errors + 1
  if first_error == "" then first_error = status .. " " .. answer:sub(1, 200) end
end

function response(status, headers, answer)
  if claim == nil then
    if status >= 200 and status < 300 then
      claim = answer:match('"claimId"%s*:%s*"([^"]+)"')
    else
      failed(status, answer)
    end
    next_arena = next_arena + 1
  else
    if status >= 200 and status < 300 then cycles = cycles + 1 else failed(status, answer) end
    claim = nil
  end
end

function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    io.write(string.format("bot cycles=%d errors=%d exhausted=%d first_error=%s\n", thread:get("cycles"),
      thread:get("errors"), thread:get("exhausted"), thread:get("first_error"):gsub("\n", " ")))
  end
end
