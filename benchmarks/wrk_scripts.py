"""wrk Lua scripts for the scenarios that POST (unique bodies per request where a name must be unique)."""

from __future__ import annotations

CREATE_AGENT = r"""
local counter = 0
local threads = {}
function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  prefix = args[1] or "bench"
  wrk.headers["Content-Type"] = "application/json"
end
request = function()
  counter = counter + 1
  local body = '{"name":"' .. prefix .. '-' .. thread_id .. '-' .. counter .. '","runtime":"default"}'
  return wrk.format("POST", nil, nil, body)
end
"""

# pages of 20 agents at offsets 0..19 in turn, the two threads on alternate offsets: requests in flight together
# ask for different pages (the list scenario asks every request for the same page, which readers coalesce)
LIST_PAGES = r"""
local threads = {}
function setup(thread)
  thread:set("thread_id", #threads)
  table.insert(threads, thread)
end
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/api/v1/agents?limit=20&offset=" .. ((counter * 2 + thread_id) % 20))
end
"""

HEARTBEAT = r"""
local threads = {}
function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end
local counter = 0
function init(args)
  wrk.headers["Content-Type"] = "application/json"
end
request = function()
  counter = counter + 1
  local worker = "bench-worker-" .. thread_id .. "-" .. (counter % 16)
  local body = '{"worker_id":"' .. worker .. '","environment_name":"bench","tasks_processed":' .. counter .. '}'
  return wrk.format("POST", nil, nil, body)
end
"""

# The fleet's load (issue: realistic load): gets of agents picked at random among the ids given as arguments;
# heartbeats from as many distinct workers as the first argument says (5,000 by default), each request a worker
# picked at random, so the server's caches see a fleet rather than 16 workers; pages of 20 at random offsets over
# the whole list (the first argument: how many agents there are).
RANDOM_GET = r"""
function init(args)
  ids = args
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end
request = function()
  return wrk.format("GET", "/api/v1/agents/" .. ids[math.random(#ids)])
end
"""

FLEET_HEARTBEAT = r"""
function init(args)
  fleet = tonumber(args[1]) or 5000
  wrk.headers["Content-Type"] = "application/json"
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end
local counter = 0
request = function()
  counter = counter + 1
  local worker = "fleet-worker-" .. math.random(fleet)
  local body = '{"worker_id":"' .. worker .. '","environment_name":"bench","tasks_processed":' .. counter .. '}'
  return wrk.format("POST", nil, nil, body)
end
"""

RANDOM_PAGES = r"""
function init(args)
  total = tonumber(args[1]) or 20
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end
request = function()
  return wrk.format("GET", "/api/v1/agents?limit=20&offset=" .. math.random(0, math.max(0, total - 20)))
end
"""

ADD_TO_TEAM = r"""
local counter = 0
function init(args)
  paths = args
end
request = function()
  counter = counter + 1
  return wrk.format("POST", paths[(counter % #paths) + 1], nil, nil)
end
"""

# One connection per wrk thread (-t N -c N), each a worker running the whole cycle in order: execute an agent
# on the queue, lease (possibly another thread's execution: the queue is shared), append three events, complete.
# `done` prints the completed round trips and the failed steps; schedule-to-start comes from the server's own
# timestamps (queued_at -> started_at), read from the database after the run.
ROUND_TRIP = r"""
local threads = {}
function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  agent, queue = args[1], args[2]
  worker = "rt-" .. id
  state = "execute"
  completed, failures = 0, 0
  wrk.headers["Content-Type"] = "application/json"
  -- the same two requests every round trip: formatted once (wrk's CPU is taken from the server's two cores)
  execute_request = wrk.format("POST", "/api/v1/agents/" .. agent .. "/execute", nil,
    '{"prompt":"round trip","worker_queue_id":"' .. queue .. '"}')
  lease_request = wrk.format("POST", "/api/v1/worker-queues/" .. queue .. "/lease", nil,
    '{"worker_id":"' .. worker .. '","wait_seconds":5}')
end
local chunk = '{"type":"message_chunk","data":{"text":"x"}}'
function request()
  if state == "execute" then
    return execute_request
  elseif state == "lease" then
    return lease_request
  elseif state == "events" then
    return wrk.format("POST", "/api/v1/executions/" .. execution .. "/events", nil,
      '{"worker_id":"' .. worker .. '","attempt":' .. attempt .. ',"events":[' .. chunk .. ',' .. chunk .. ',' ..
      chunk .. ']}')
  end
  return wrk.format("POST", "/api/v1/executions/" .. execution .. "/complete", nil,
    '{"worker_id":"' .. worker .. '","attempt":' .. attempt .. ',"status":"completed","response":"ok"}')
end
function response(status, headers, body)
  local ok = status >= 200 and status < 300
  if not ok then failures = failures + 1 end
  if state == "execute" then
    if ok then state = "lease" end
  elseif state == "lease" then
    if status == 200 then
      execution = string.match(body, '"execution":{"id":"([^"]+)"')
      attempt = string.match(body, '"attempt":(%d+)')
      if execution and attempt then state = "events" end
    end
  elseif state == "events" then
    state = ok and "complete" or "execute"
  else
    if ok then completed = completed + 1 end
    state = "execute"
  end
end
function done(summary, latency, requests)
  local total, failed = 0, 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("completed")
    failed = failed + thread:get("failures")
  end
  io.write(string.format("ROUND_TRIPS %d FAILURES %d\n", total, failed))
end
"""
