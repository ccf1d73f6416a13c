;;; eglot_driver.el --- drive eglot in `emacs --batch' for deepseek-ls's tests  -*- lexical-binding: t -*-

;; The Emacs end of tests/emacs/emacs_harness.py: Emacs runs as a person's editor would, with eglot
;; (Debian's elpa-eglot, or the one built into Emacs 29+) configured by the snippet of docs/editors.md,
;; and this file turns lines on stdin into what a person does: open a file, pick a code action from
;; eglot's menu, answer eglot's "Proceed?" prompt.  One JSON request per line on stdin
;;   {"fn": "open", "args": ["app.py"]}
;; and one answer line on stdout, `DSLS ' then JSON: {"ok": true, "value": ...} or
;; {"ok": false, "error": "..."}.  Emacs ends at the end of stdin.  Every wait is bounded.

(require 'cl-lib)
(require 'json)
(require 'eglot)
(require 'flymake)

(defvar dsls-root nil "The workspace (set from $DSLS_ROOT).")
(defvar dsls-timeout 60 "Seconds any one wait may take.")
(setq eglot-connect-timeout 120)  ; a loaded CI machine starts Python slowly; the default is 30 s
(defvar dsls--answers nil
  "How the person answers the prompts to come, oldest first: \"y\" / \"n\" for eglot's y-or-n-p, a
choice's title for a server's `window/showMessageRequest' (eglot asks it with completing-read).")
(defvar dsls--prompts nil "The prompts asked and not yet reported, newest first.")
(defvar dsls--menu-pick nil "The title to pick in the code action menu being shown, if any.")
(defvar dsls--menu nil "The titles that menu offered.")

(defun dsls--wait (what pred)
  "Process the server's messages and timers until PRED returns non-nil; return it.
An error naming WHAT after `dsls-timeout' seconds."
  (let ((deadline (+ (float-time) dsls-timeout)) value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (error "Waited %ss for %s" dsls-timeout what))))

(defun dsls--command (fn &rest args)
  "Run FN with ARGS as the command loop runs a command: `this-command' set, then `post-command-hook'
and, as the redisplay after it would, the window configuration hooks (eglot-ensure and flymake wait
for them: batch Emacs has neither a command loop nor redisplay)."
  (let ((this-command fn))
    (prog1 (apply fn args)
      (run-hooks 'post-command-hook)
      (run-window-configuration-change-hook))))

(defun dsls--buffer (rel)
  (or (find-buffer-visiting (expand-file-name rel dsls-root))
      (error "%s is not open" rel)))

(defun dsls--next-answer (prompt)
  (push prompt dsls--prompts)
  (or (pop dsls--answers) (error "Unexpected prompt: %s" prompt)))

;; The person, for every prompt whenever it comes (a server request may arrive after the command
;; that caused it returned): answers from `dsls--answers'; an unexpected prompt is an error, which
;; eglot answers the server with.  Never stdin, which carries the driver's requests.
(defun dsls--y-or-n-p (prompt)
  (string= (dsls--next-answer prompt) "y"))

(defun dsls--completing-read (prompt collection &rest _)
  (let ((titles (mapcar (lambda (c) (if (consp c) (car c) c)) collection)))
    (if dsls--menu-pick
        (let ((pick (prog1 dsls--menu-pick (setq dsls--menu-pick nil))))
          (setq dsls--menu titles)
          (if (member pick titles) pick (error "No action %S among %S" pick titles)))
      (let ((answer (dsls--next-answer prompt)))
        (if (member answer titles) answer (error "No choice %S among %S" answer titles))))))

(fset 'y-or-n-p #'dsls--y-or-n-p)
(fset 'completing-read #'dsls--completing-read)

(defun dsls--our-diagnostics ()
  "The deepseek diagnostics flymake shows in the current buffer: (:line N :text MESSAGE), by line."
  (sort (cl-loop for d in (flymake-diagnostics)
                 for text = (flymake-diagnostic-text d)
                 when (string-prefix-p "deepseek" text)
                 collect (list :line (1- (line-number-at-pos (flymake-diagnostic-beg d)))
                               :text text
                               :type (symbol-name (flymake-diagnostic-type d))))
        (lambda (a b) (< (plist-get a :line) (plist-get b :line)))))

;; Requests (the "fn" of a line): each returns something JSON can say.

(defun dsls-open (rel)
  "Visit REL in the workspace (find-file, as a person does) and wait until eglot manages it (the
snippet's `eglot-ensure' connects, or the connection of the project takes the buffer)."
  (with-current-buffer (dsls--command #'find-file (expand-file-name rel dsls-root))
    (dsls--wait (format "eglot to manage %s" rel) (lambda () (bound-and-true-p eglot--managed-mode)))
    ;; The person's next key: flymake, turned on by eglot during the last command, starts after it.
    (dsls--command #'ignore)
    (symbol-name major-mode)))

(defun dsls-diagnostics (rel count)
  "Wait until flymake shows COUNT deepseek diagnostics in REL; return them."
  (with-current-buffer (dsls--buffer rel)
    (dsls--wait (format "%d deepseek diagnostics in %s (flymake shows %S)" count rel
                        (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))
                (lambda () (let ((ours (dsls--our-diagnostics)))
                             (and (= (length ours) count) (or ours :empty)))))
    (vconcat (dsls--our-diagnostics))))

(defun dsls-code-action (rel line title answers)
  "Put point on LINE (0-based) of REL and run `eglot-code-actions' as a person does, picking
TITLE from its menu; the prompts that follow get ANSWERS.  Return the titles offered, the
prompts asked so far, whether the action failed (its message) and the buffer's text after."
  (with-current-buffer (dsls--buffer rel)
    (goto-char (point-min))
    (forward-line line)
    (let ((failed nil)
          (last-nonmenu-event ?a))  ; chosen from the keyboard: eglot's completing-read menu
      (setq dsls--menu-pick title dsls--menu nil
            dsls--answers (append dsls--answers answers nil))
      (condition-case err
          (dsls--command #'eglot-code-actions (line-beginning-position) (line-end-position) nil t)
        (error (setq failed (error-message-string err))))
      (setq dsls--menu-pick nil)
      (list :offered (vconcat dsls--menu) :prompts (dsls-prompts)
            :failed failed :text (buffer-substring-no-properties (point-min) (point-max))))))

(defun dsls-prompts ()
  "The prompts asked since the last report, oldest first."
  (prog1 (vconcat (reverse dsls--prompts)) (setq dsls--prompts nil)))

(defun dsls-complete (rel line column)
  "Put point at LINE, COLUMN (0-based) of REL and run `completion-at-point' with eglot's completion
function; the buffer's text after."
  (with-current-buffer (dsls--buffer rel)
    (goto-char (point-min))
    (forward-line line)
    (forward-char column)
    ;; eglot's alone: with no match, the functions after it (python-mode's, tags) would prompt.
    (let ((completion-at-point-functions '(eglot-completion-at-point)))
      (dsls--command #'completion-at-point))
    (buffer-substring-no-properties (point-min) (point-max))))

(defun dsls-text (rel)
  (with-current-buffer (dsls--buffer rel) (buffer-substring-no-properties (point-min) (point-max))))

(defun dsls-modified (rel)
  (with-current-buffer (dsls--buffer rel) (if (buffer-modified-p) t :json-false)))

;; The loop.

(defun dsls--answer (object)
  (princ (concat "DSLS " (json-encode object) "\n")))

(defun dsls--serve ()
  (setq dsls-root (file-name-as-directory (getenv "DSLS_ROOT")))
  (let (line)
    (while (setq line (ignore-errors (read-from-minibuffer "")))
      (condition-case err
          (let* ((request (json-parse-string line :object-type 'plist :array-type 'list))
                 (fn (intern (concat "dsls-" (plist-get request :fn)))))
            (dsls--answer (list :ok t :value (apply fn (plist-get request :args)))))
        (error (dsls--answer (list :ok :json-false :error (error-message-string err)))))))
  ;; End of stdin: shut the server down as eglot does (shutdown, exit), not by killing it with Emacs.
  (ignore-errors (eglot-shutdown-all)))

(provide 'eglot_driver)
;;; eglot_driver.el ends here
