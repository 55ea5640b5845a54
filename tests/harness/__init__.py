"""Every piece of the tests that starts or drives a real process: the API server and etcd (``kube_server``), Redis
(``redis_server``), the Go tooling (``go_tools``), Argo CD's own diff (``argocd_diff``, ``argocd_judge``,
``served_kinds``), the bot itself (``service_kit``, ``bot_process``), a real Argo CD
(``argocd_stack``, ``git_daemon``, ``argocd_e2e``, ``argocd_cases``) and a fleet of stand-in apps for it
(``fleet_kit``). Their fixtures are registered for every folder by tests/conftest.py; a fixture defined here costs
what tests/conftest.py says (``COST_OF_HARNESS``), and importing a module here starts and builds nothing."""
