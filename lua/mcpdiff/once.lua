-- once(fn) returns a function that runs fn on the next turn of the event loop, once
-- however often it is called before then: a burst of events (a change per typed
-- key, a buffer read per file of :argdo) becomes one pass.
return function(fn)
  local scheduled = false
  return function()
    if scheduled then
      return
    end
    scheduled = true
    vim.schedule(function()
      scheduled = false
      fn()
    end)
  end
end
